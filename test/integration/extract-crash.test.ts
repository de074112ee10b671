// POST /v2/extract survives kill -9 of the process that runs the job, in both modes. The job names two pages and a path
// crawl; one page and the crawl's second page are held by the site, so when the job's owner is killed one page is
// done (stored as a step), one page is in flight and the crawl is running. Embedded: `trawl all --embedded` is killed
// and started again on the same DATA_DIR. Cluster: two `trawl all` processes share the topics and groups; the one that
// runs the job is killed and the other takes its partitions over. Either way the job must end `completed` with the
// hand-written merged data, the finished page not fetched again, one crawl only (no second submit), and that crawl's
// credits counted once per page.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { jobCrawlId } from "../../pipeline/usecases/extract-run.ts";
import { freePort } from "./own-infra.ts";
import { allChunks, getJson, MODES, postJson } from "./harness.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const fixture = (name: string) => readFileSync(join(ROOT, "test", "fixtures", "extract", name), "utf8");

/** The site: pages by path, hits counted, some held until release(). */
async function startSite(held: string[]) {
  const pages: Record<string, string> = {
    "/shop/trail-runner": fixture("product-jsonld.html"),
    "/blog/kafka": fixture("article-jsonld.html"),
    "/events/": `<!doctype html><html><head><title>Events</title></head><body><main><p>What is on this month.</p><a href="/events/library">Library</a></main></body></html>`,
    "/events/library": fixture("microdata-events.html"),
  };
  const hits = new Map<string, number>();
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] as string;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const answer = () => {
      const body = pages[path];
      if (body === undefined) res.writeHead(404, { "content-type": "text/html" }).end("<p>Not found</p>");
      else res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
    };
    if (held.includes(path)) void released.then(answer);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: (path: string) => hits.get(path) ?? 0,
    release,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

interface Proc { child: ChildProcess; output: () => string; api: string }

async function launch(args: string[], env: Record<string, string>): Promise<Proc> {
  const port = await freePort();
  const child = spawn(join(ROOT, "node_modules", ".bin", "node"), ["bin/trawl.js", ...args], {
    cwd: ROOT, stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env, PORT: String(port), ALLOW_PRIVATE_CRAWL_TARGETS: "true", LOG_LEVEL: "info", MAX_CPU: "1", MAX_RAM: "1", RENDER: "never", FETCH_RETRIES: "1" },
  });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const api = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 1200; i++) {
    if (await fetch(`${api}/ready`).then((r) => r.ok, () => false)) return { child, output: () => out, api };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`trawl did not start:\n${out.slice(-3000)}`);
}

const kill9 = (p: Proc) => new Promise<void>((resolve) => {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve();
  p.child.once("exit", () => resolve());
  p.child.kill("SIGKILL");
});

async function until(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>, logs: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const lines = (out: string, ...texts: string[]) => out.split("\n").filter((l) => texts.every((t) => l.includes(t)));

const schema = {
  type: "object",
  properties: {
    price: { type: "number" }, currency: { type: "string" }, sku: { type: "string" }, wordCount: { type: "integer" },
    contact: { type: "string" }, openingHours: { type: "string" },
  },
};
// written by hand from the pages: the product (price, currency, sku), the article (wordCount), the events page
const expected = {
  price: 129.9, currency: "EUR", sku: "TR3-42", wordCount: 1830,
  contact: "events@library.example", openingHours: "Mon–Sat 9:00–18:00",
};

describe.each(MODES)("%s mode: kill -9 of the process running an extract job", (mode) => {
  const procs: Proc[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-extract-crash-"));
  let site: Awaited<ReturnType<typeof startSite>> | undefined;
  afterAll(async () => {
    await Promise.all(procs.map(kill9));
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("another process resumes the job: right data, finished work not redone, one crawl charged once", async () => {
    site = await startSite(["/blog/kafka", "/events/library"]);
    const tag = `x${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
    const start = () => mode === "embedded"
      ? launch(["all", "--embedded"], { DATA_DIR: dataDir })
      : launch(["all"], {
        TRAWL_MODE: "cluster", KAFKA_TOPIC_PREFIX: `${tag}.`, KAFKA_GROUP_PREFIX: `${tag}.`, CLICKHOUSE_DATABASE: `trawl_${tag}`,
        KAFKA_PARTITIONS: "4", KAFKA_SESSION_TIMEOUT_MS: "6000", SCHEMA_REGISTRY_URL: "",
      });
    // cluster: two replicas of every role (the second starts once the first created the topics and the database)
    procs.push(await start());
    if (mode === "cluster") procs.push(await start());
    const logs = () => procs.map((p, i) => `--- process ${i}\n${p.output().slice(-3000)}`).join("\n");
    const all = () => procs.map((p) => p.output()).join("\n");

    const urls = [`${site.origin}/shop/trail-runner`, `${site.origin}/blog/kafka`, `${site.origin}/events/*`];
    const submitted = await postJson(`${procs[0]?.api}/v2/extract`, { urls, schema });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const id = submitted.body.id as string;

    // mid-job: the first page stored as a step, the second page in flight, the crawl waiting for its second page
    await until("the job to be mid-way", 90_000, () =>
      lines(all(), id, "extract step done", '"step":"page-0"').length === 1 && site!.hits("/blog/kafka") >= 1 && site!.hits("/events/library") >= 1, logs);
    const owner = procs.find((p) => lines(p.output(), id, "extract step done").length > 0) as Proc;
    await kill9(owner);
    const survivors = procs.filter((p) => p !== owner);
    if (mode === "embedded") procs.push(await start());
    const api = (mode === "embedded" ? procs.at(-1) : survivors[0])?.api as string;
    site.release();

    let job: any;
    await until("the job to complete", 120_000, async () => {
      job = (await getJson(`${api}/v2/extract/${id}`)).body;
      return job.status !== "processing";
    }, logs);
    expect(job.status, JSON.stringify(job)).toBe("completed");
    expect(job.data).toEqual(expected);
    expect(lines(all(), id, "extract job resumed")).toHaveLength(1);
    // the finished page was not fetched again; the interrupted one was
    expect(site.hits("/shop/trail-runner")).toBe(1);
    expect(site.hits("/blog/kafka")).toBeGreaterThanOrEqual(2);
    // one crawl, submitted once (the resumed job found it by its fixed id), every page of it charged once
    const crawlId = jobCrawlId(id, 0);
    const submits = lines(all(), "crawl submitted");
    expect(submits).toHaveLength(1);
    expect(submits[0]).toContain(crawlId);
    const docs = (await allChunks(api, crawlId)).flatMap((c) => c.body.data);
    const status = (await getJson(`${api}/v2/crawl/${crawlId}?limit=1`)).body;
    expect(status).toMatchObject({ status: "completed", completed: 2 });
    expect(docs.map((d: any) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(["/events/", "/events/library"]);
    expect(status.creditsUsed).toBe(docs.reduce((n: number, d: any) => n + Number(d.metadata.creditsUsed), 0));
  });
});
