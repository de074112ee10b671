// Bytes each page puts through Kafka, per topic, before compression, against the size of the stored document; and
// the copies ClickHouse keeps. A cluster crawl of a local site (every role in this process, on the Kafka and
// ClickHouse of KAFKA_BROKERS / CLICKHOUSE_URL, under a topic prefix and database of its own), then every record of
// every topic of that prefix read back with kcat (key and value lengths as the consumer sees them: decompressed),
// summed per topic and divided by the pages stored. Two crawls: one with no webhook, one whose webhook takes every
// event (page events become webhook.deliveries records).
// usage: node bench/kafka-bytes.ts [pg|synthetic:<pages>] [limit]     (default: pg 300; `npm run bench -- kafka-bytes`)
// KAFKA_BYTES_ENV=A=1,B=2: settings of the Trawl instances (e.g. CRAWL_EVENTS_DOCUMENT=false)
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { start, ROLES } from "../app/start.ts";
import { loadConfig, type Config } from "../pipeline/runtime/config.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";
import { ClickHouseClient } from "../pipeline/store/clickhouse.ts";
import { raw } from "../pipeline/store/sql.ts";
import { topics } from "../pipeline/topology.ts";
import { ensurePostgresManual, serveDirectory } from "./corpus.ts";
import { startSyntheticSite } from "./synthetic-site.ts";

const run = promisify(execFile);

interface TopicBytes {
  messages: number;
  keyBytes: number;
  valueBytes: number;
  /** key + value bytes per stored page */
  bytesPerPage: number;
  /** bytesPerPage / the stored document's bytes per page */
  perDocument: number;
  /** the topic's log segments per stored page, as the broker keeps them (compressed, with batch and record headers) */
  onDiskBytesPerPage?: number;
}

/**
 * The broker's data directory when it is on this machine: KAFKA_BYTES_LOG_DIR, else that of `scripts/infra.sh`
 * (.infra/kafka/data); none: on-disk sizes are not reported.
 */
const logDir = (env: NodeJS.ProcessEnv): string | null => {
  const dir = env.KAFKA_BYTES_LOG_DIR ?? join(import.meta.dirname, "..", ".infra", "kafka", "data");
  return existsSync(dir) ? dir : null;
};

/** Bytes of the .log segments of every partition of `topic` in the broker's data directory. */
function onDiskBytes(dir: string, topic: string): number {
  let bytes = 0;
  for (const d of readdirSync(dir)) {
    if (!d.startsWith(`${topic}-`) || !/^\d+$/.test(d.slice(topic.length + 1))) continue;
    for (const f of readdirSync(join(dir, d))) if (f.endsWith(".log")) bytes += statSync(join(dir, d, f)).size;
  }
  return bytes;
}

/** Every record of `topic` from the beginning: count, key bytes, value bytes (kcat: %K and %S, -1 for null). */
async function topicBytes(brokers: string, topic: string): Promise<{ messages: number; keyBytes: number; valueBytes: number }> {
  const { stdout } = await run("kcat", ["-b", brokers, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%K %S\\n"], { maxBuffer: 256 * 1024 * 1024 });
  let messages = 0;
  let keyBytes = 0;
  let valueBytes = 0;
  for (const line of stdout.split("\n")) {
    if (!line) continue;
    const [k, v] = line.split(" ").map(Number) as [number, number];
    messages++;
    keyBytes += Math.max(0, k);
    valueBytes += Math.max(0, v);
  }
  return { messages, keyBytes, valueBytes };
}

/** The topics of the broker whose name starts with `prefix`. */
async function topicsWithPrefix(brokers: string, prefix: string): Promise<string[]> {
  const { stdout } = await run("kcat", ["-b", brokers, "-L", "-J"], { maxBuffer: 256 * 1024 * 1024 });
  return (JSON.parse(stdout) as { topics: { topic: string }[] }).topics.map((t) => t.topic).filter((t) => t.startsWith(prefix)).sort();
}

/** A webhook endpoint that answers 200 to everything and counts the events. */
async function startSink(): Promise<{ url: string; received: () => number; close(): Promise<void> }> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, received: () => received, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

async function waitFor(what: string, ok: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One crawl on an instance of its own; every topic of its prefix measured once it stopped. */
async function crawlAndMeasure(startUrl: string, limit: number, webhook: boolean, env: NodeJS.ProcessEnv) {
  // a test tag (test/integration/leftovers.ts removes the topics and databases of runs older than two hours)
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-bench-"));
  const config: Config = loadConfig(env, {
    mode: "cluster", dataDir, host: "127.0.0.1", port: 0, topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, clickhouseDatabase: `trawl_${tag}`,
    allowPrivateCrawlTargets: true, allowLocalWebhooks: true, logLevel: env.LOG_LEVEL ?? "error",
  });
  const hook = webhook ? await startSink() : null;
  const running = await start(ROLES, config, createLogger(config.logLevel, { bench: "kafka-bytes" }));
  const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: config.clickhouseDatabase, caFile: config.clickhouseCaFile });
  try {
    const api = `http://127.0.0.1:${(running.server?.address() as AddressInfo).port}`;
    const body = { url: startUrl, limit, crawlEntireDomain: true, ...(hook ? { webhook: { url: hook.url, events: ["started", "page", "completed", "failed"] } } : {}) };
    const res = await fetch(`${api}/v2/crawl`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const { id } = (await res.json()) as { id: string };
    let status: { status: string; completed: number } = { status: "scraping", completed: 0 };
    await waitFor("the crawl's end", async () => {
      status = (await (await fetch(`${api}/v2/crawl/${id}?limit=1`)).json()) as typeof status;
      return status.status !== "scraping";
    }, 600_000);
    // the webhook's every event delivered (the deliveries topic and the retries are then complete)
    if (hook) await waitFor("the webhook's events", () => hook.received() >= status.completed + 2, 120_000);
  } finally {
    await running.stop();
    await hook?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const [doc] = await ch.query<{ pages: string; bytes: string }>(raw(`SELECT count() AS pages, sum(length(doc)) AS bytes FROM ${ch.database}.documents`));
  const pages = Number(doc?.pages ?? 0);
  const docBytesPerPage = Number(doc?.bytes ?? 0) / Math.max(1, pages);
  const perPage = (n: number) => +(n / Math.max(1, pages)).toFixed(0);
  const byTopic: Record<string, TopicBytes> = {};
  let total = 0;
  const dir = logDir(env);
  let onDisk = 0;
  for (const topic of await topicsWithPrefix(config.kafkaBrokers, config.topicPrefix)) {
    const t = await topicBytes(config.kafkaBrokers, topic);
    if (t.messages === 0) continue;
    const bytes = t.keyBytes + t.valueBytes;
    total += bytes;
    const disk = dir ? onDiskBytes(dir, topic) : 0;
    onDisk += disk;
    byTopic[topic.slice(config.topicPrefix.length)] = { ...t, bytesPerPage: perPage(bytes), perDocument: +(bytes / Math.max(1, pages) / docBytesPerPage).toFixed(2), ...(dir ? { onDiskBytesPerPage: perPage(disk) } : {}) };
  }
  // what ClickHouse keeps of the crawl, by table (uncompressed bytes of the active parts)
  const parts = await ch.query<{ table: string; bytes: string }>(raw(`SELECT table, sum(data_uncompressed_bytes) AS bytes FROM system.parts WHERE database = '${ch.database}' AND active GROUP BY table ORDER BY table`));
  const stored = Object.fromEntries(parts.map((p) => [p.table, perPage(Number(p.bytes))]).filter(([, b]) => Number(b) > 0));
  await ch.exec(raw(`DROP DATABASE IF EXISTS ${ch.database}`));
  const known = new Set(topics.map((t) => t.name as string));
  return {
    pages,
    docBytesPerPage: perPage(docBytesPerPage * pages),
    kafkaBytesPerPage: perPage(total),
    kafkaPerDocument: +(total / Math.max(1, pages) / docBytesPerPage).toFixed(2),
    ...(dir ? { kafkaOnDiskBytesPerPage: perPage(onDisk) } : {}),
    topics: byTopic,
    unknownTopics: Object.keys(byTopic).filter((t) => !known.has(t.replace(/\.dlq$/, ""))),
    storedBytesPerPage: stored,
  };
}

export async function kafkaBytes(siteSpec = "pg", limit = 300, env: NodeJS.ProcessEnv = process.env) {
  const synthetic = /^synthetic:(\d+)$/.exec(siteSpec);
  if (siteSpec !== "pg" && !synthetic) throw new Error(`unknown site ${siteSpec}: pg or synthetic:<pages>`);
  const site = synthetic ? await startSyntheticSite(Number(synthetic[1])) : await serveDirectory(ensurePostgresManual());
  const startUrl = synthetic ? `${site.origin}/site/p0.html` : `${site.origin}/docs/index.html`;
  try {
    const plain = await crawlAndMeasure(startUrl, limit, false, env);
    const webhook = await crawlAndMeasure(startUrl, limit, true, env);
    return { site: siteSpec, limit, settings: process.env.KAFKA_BYTES_ENV ?? "", plain, webhook };
  } finally {
    await site.close();
  }
}

/** The table of one crawl (stderr). */
function table(name: string, r: Awaited<ReturnType<typeof crawlAndMeasure>>): string {
  const rows = Object.entries(r.topics).map(([t, x]) => `| ${t} | ${x.messages} | ${x.bytesPerPage} | ${x.perDocument}x | ${x.onDiskBytesPerPage ?? "-"} |`);
  return [
    `${name}: ${r.pages} pages, stored document ${r.docBytesPerPage} B/page; Kafka ${r.kafkaBytesPerPage} B/page = ${r.kafkaPerDocument}x the document (on the broker's disk: ${r.kafkaOnDiskBytesPerPage ?? "-"} B/page)`,
    "| topic | records | bytes/page (key+value) | x document | on disk, B/page |", "|---|---|---|---|---|", ...rows,
    `stored in ClickHouse, B/page by table: ${JSON.stringify(r.storedBytesPerPage)}`,
  ].join("\n");
}

/** `A=1,B=2` -> { A: "1", B: "2" } */
const settings = (text: string | undefined): Record<string, string> =>
  Object.fromEntries((text ?? "").split(",").filter((x) => x.includes("=")).map((x) => [x.slice(0, x.indexOf("=")).trim(), x.slice(x.indexOf("=") + 1).trim()]));

if (import.meta.url === `file://${process.argv[1]}`) {
  const [siteSpec = "pg", limit = "300"] = process.argv.slice(2);
  // KAFKA_BYTES_ENV="CRAWL_EVENTS_DOCUMENT=false": Trawl's settings for this run
  const result = await kafkaBytes(siteSpec, Number(limit), { ...process.env, ...settings(process.env.KAFKA_BYTES_ENV) });
  console.error(table("no webhook", result.plain));
  console.error(table("webhook with every event", result.webhook));
  console.log(JSON.stringify(result));
  process.exit(0);
}
