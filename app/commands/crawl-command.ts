// `trawl crawl <url>`: an embedded crawl without an HTTP server, written to files as pages arrive.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { CrawlOptions, PageDocument } from "../../schemas/index.ts";
import { checkStartUrl } from "../../pipeline/url/start-url.ts";
import { start, type Running } from "../start.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { sleep } from "../../pipeline/runtime/retry.ts";
import { cancelCrawl, submitCrawl } from "../../pipeline/usecases/submit-crawl.ts";
import { crawlUrls } from "../../pipeline/usecases/crawl-urls.ts";
import { CrawlOutput, slugFor } from "./output.ts";
import { ProgressReporter } from "./progress.ts";
import { commandArgs } from "./args.ts";
import { WarcArchive } from "../../pipeline/store/warc/warc-archive.ts";

export const CRAWL_HELP = `usage: trawl crawl <url> [options]

Crawls <url> and the pages under its path in this process (embedded mode: no server, no Kafka, no ClickHouse),
writing one file per page and format plus index.jsonl (one line of metadata per page) to --out, and at the end
urls.jsonl: every URL the crawl saw with its state and reason (fetched, duplicate, out_of_scope, excluded, ...).

options:
  --limit N            most pages to crawl (default 10000)
  --format F           markdown | html | rawHtml | links | images; repeat for several (default markdown)
  --out DIR            output directory (default ./trawl-<host>)
  --entire-domain      crawl the whole domain, not only the start URL's path
  --subdomains         include subdomains of the start host
  --all-content        keep navigation, headers and footers (default: main content only)
  --timeout-ms N       time limit of one page fetch (default from FETCH_TIMEOUT_MS, 30000)
  --warc DIR           also write the crawl as web archives: DIR/<crawl id>/*.warc.gz (WARC 1.1) and index.cdxj
  -h, --help           this help

Exit status: 0 completed, 1 failed, 2 bad usage, 130 interrupted (Ctrl-C cancels; pages already written stay).
Environment variables of the configuration table apply (e.g. ALLOW_PRIVATE_CRAWL_TARGETS=true for local sites).`;

const FORMATS = ["markdown", "html", "rawHtml", "links", "images"] as const;

export async function crawlCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const args = commandArgs(argv, {
    limit: { type: "string" }, format: { type: "string", multiple: true }, out: { type: "string" },
    "entire-domain": { type: "boolean" }, subdomains: { type: "boolean" }, "all-content": { type: "boolean" },
    "timeout-ms": { type: "string" }, warc: { type: "string" },
  }, CRAWL_HELP);
  if ("exit" in args) return args.exit;
  const values = args.values as {
    limit?: string; format?: string[]; out?: string; "entire-domain"?: boolean; subdomains?: boolean; "all-content"?: boolean; "timeout-ms"?: string; warc?: string;
  };
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-crawl-"));
  let config;
  let url: string;
  const options: CrawlOptions = { limit: 10000, crawlEntireDomain: Boolean(values["entire-domain"]), allowSubdomains: Boolean(values.subdomains), formats: ["markdown"], onlyMainContent: !values["all-content"] };
  try {
    // no copy to a bucket (WARC_S3_URL): the command ends with its crawl, before a copy could be made
    config = loadConfig(env, { mode: "embedded", dataDir, embeddedPartitions: 4, warcS3Url: "", ...(values.warc !== undefined ? { warcDir: resolve(values.warc) } : {}) });
    if (values.warc !== undefined) options.warc = true;
    url = checkStartUrl(args.url, config.allowPrivateCrawlTargets);
    if (values.limit !== undefined) {
      if (!/^\d+$/.test(values.limit) || Number(values.limit) < 1) throw new Error(`--limit must be a positive integer, not ${values.limit}`);
      options.limit = Number(values.limit);
    }
    if (values["timeout-ms"] !== undefined) {
      if (!/^\d+$/.test(values["timeout-ms"])) throw new Error(`--timeout-ms must be a positive integer`);
      options.timeoutMs = Number(values["timeout-ms"]);
    }
    if (values.format?.length) {
      const bad = values.format.filter((f) => !(FORMATS as readonly string[]).includes(f));
      if (bad.length) throw new Error(`unknown --format ${bad.join(", ")} (use ${FORMATS.join(", ")})`);
      options.formats = [...new Set(values.format)] as CrawlOptions["formats"];
    }
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    console.error((err as Error).message);
    return 2;
  }
  const outDir = resolve(values.out ?? `trawl-${slugFor(url).split("_")[0]}`);
  const log = createLogger(env.LOG_LEVEL ?? "warn", { role: "crawl" });
  let running: Running | undefined;
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    running = await start(["frontier", "fetch-render", "convert", "sink"], config, log);
    const deps = { store: running.store, bus: running.bus, clock: running.clock, log };
    const id = await submitCrawl(deps, { url, options, teamId: "cli", webhook: "" });
    const output = new CrawlOutput(outDir);
    const progress = new ProgressReporter(process.stderr);
    let skip = 0;
    const drain = async () => {
      for (;;) {
        const page = await deps.store.pageDocuments(id, skip, 32 * 1024 * 1024, 500);
        page.docs.forEach((text, i) => output.write(skip + i, JSON.parse(text) as PageDocument));
        skip = page.nextSkip;
        if (!page.more) return;
      }
    };
    let status = "scraping";
    for (;;) {
      const crawl = await deps.store.getCrawl(id);
      await drain();
      if (crawl) {
        status = crawl.status;
        progress.update({ done: crawl.completed, found: crawl.total + crawl.failed, failed: crawl.failed, reasons: crawl.reasons }, status !== "scraping");
      }
      if (status !== "scraping") break;
      if (interrupted) {
        await cancelCrawl(deps, id);
        status = "cancelled";
        await drain();
        break;
      }
      await sleep(250);
    }
    const crawl = await deps.store.getCrawl(id);
    // every URL the crawl saw, with its state and reason: the rows of GET /v2/crawl/:id/urls
    if (crawl) output.writeUrls((await crawlUrls(deps.store, crawl)).entries);
    await output.close();
    progress.end(`${status}: ${output.written} pages written to ${outDir}${crawl?.error ? ` (${crawl.error})` : ""}`);
    if (values.warc !== undefined) {
      // the writers close with the process; the index is merged from their sidecars
      await running.stop();
      running = undefined;
      const archive = new WarcArchive({ root: config.warcDir, maxFileBytes: config.warcMaxFileBytes });
      writeFileSync(join(archive.crawlDir(id), "index.cdxj"), (await archive.cdxj(id)).join(""));
      process.stderr.write(`web archives (WARC 1.1) and index.cdxj in ${archive.crawlDir(id)}\n`);
    }
    return interrupted ? 130 : status === "completed" ? 0 : 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await running?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
