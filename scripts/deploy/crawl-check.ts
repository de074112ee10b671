// The crawl of the deploy checks (scripts/deploy/run-image.sh, run-compose.sh): serves a 20-page fixture site from the
// host, waits for a Trawl in a container to answer /health and /ready, crawls the site through the API and checks the
// result exactly: `completed` with total = completed = 20, every page once with status 200, no other page, and every
// page fetched once from the site.
//   node scripts/deploy/crawl-check.ts --api http://127.0.0.1:19710 [--listen 0.0.0.0 --port 19711 --origin-host H]
// --origin-host: the name the containers reach the host by (127.0.0.1 with --network host; host.containers.internal
// on a compose network). --api-key: sent as a bearer token (an API with USE_DB_AUTHENTICATION=true). Exits 0 when exact, 1 otherwise, printing what differed.
import { parseArgs } from "node:util";
import { startManyPagesSite } from "../../test/fixtures/many-pages-site.ts";

const { values: args } = parseArgs({
  options: {
    api: { type: "string" },
    "api-key": { type: "string" },
    listen: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    "origin-host": { type: "string", default: "127.0.0.1" },
    "ready-timeout-s": { type: "string", default: "180" },
    "crawl-timeout-s": { type: "string", default: "180" },
  },
});
if (!args.api) throw new Error("--api is required");
const api = args.api.replace(/\/$/, "");
const started = Date.now();
interface Doc { markdown?: string; metadata?: { sourceURL?: string; url?: string; statusCode?: number } }
interface CrawlPage { status?: string; total?: number; completed?: number; data?: Doc[]; next?: string }
const auth: Record<string, string> = args["api-key"] ? { authorization: `Bearer ${args["api-key"]}` } : {};
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

async function until(what: string, timeoutS: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutS * 1000;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${what}: not after ${timeoutS} s`);
}

// 1 home page + 1 section + 18 pages = 20 pages, each linking to four others (mostly duplicates to drop)
const site = await startManyPagesSite({
  sections: 1, pagesPerSection: 18, delayMs: 0, listen: args.listen, port: Number(args.port), originHost: args["origin-host"],
});
let failures: string[] = [];
try {
  await until(`${api}/health`, Number(args["ready-timeout-s"]), async () => (await fetch(`${api}/health`)).ok);
  await until(`${api}/ready`, Number(args["ready-timeout-s"]), async () => (await fetch(`${api}/ready`)).ok);
  console.log(`[crawl-check] ${api} healthy and ready after ${elapsed()}`);
  const submit = await fetch(`${api}/v2/crawl`, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth },
    body: JSON.stringify({ url: `${site.origin}/`, limit: 100, scrapeOptions: { formats: ["markdown"] } }),
  });
  const submitted = (await submit.json()) as { success?: boolean; id?: string };
  if (submit.status !== 200 || !submitted.id) throw new Error(`POST /v2/crawl: ${submit.status} ${JSON.stringify(submitted)}`);
  let status: CrawlPage = {};
  await until(`crawl ${submitted.id} to end`, Number(args["crawl-timeout-s"]), async () => {
    status = (await (await fetch(`${api}/v2/crawl/${submitted.id}`, { headers: auth })).json()) as CrawlPage;
    return status.status !== "scraping";
  });
  // every page of the result (the status answer pages by `next`)
  const data: Doc[] = [...(status.data ?? [])];
  for (let next = status.next; next; ) {
    const more = (await (await fetch(next, { headers: auth })).json()) as CrawlPage;
    data.push(...(more.data ?? []));
    next = more.next;
  }
  const n = site.paths.length;
  const check = (ok: boolean, what: string) => { if (!ok) failures.push(what); };
  check(status.status === "completed", `status ${status.status}, expected completed`);
  check(status.total === n && status.completed === n, `total ${status.total} completed ${status.completed}, expected ${n}`);
  const got = data.map((d) => new URL(d.metadata?.sourceURL ?? d.metadata?.url ?? "x:").pathname).sort();
  const want = [...site.paths].sort();
  check(JSON.stringify(got) === JSON.stringify(want), `pages ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  check(data.every((d) => d.metadata?.statusCode === 200 && typeof d.markdown === "string" && d.markdown.includes("Filler text")),
    "a page without status 200 or without its text in markdown");
  const twice = site.paths.filter((p) => site.hits.get(p) !== 1);
  check(twice.length === 0, `pages not fetched exactly once: ${twice.map((p) => `${p}×${site.hits.get(p) ?? 0}`).join(", ")}`);
  console.log(`[crawl-check] crawl ${submitted.id}: ${status.status}, ${data.length} pages in ${elapsed()}`);
} catch (err) {
  failures = [...failures, String(err)];
} finally {
  await site.close();
}
if (failures.length) {
  for (const f of failures) console.error(`[crawl-check] FAIL ${f}`);
  process.exit(1);
}
console.log(`[crawl-check] ok: exactly the site's ${site.paths.length} pages, each fetched once`);
