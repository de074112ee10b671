// Web archives survive kill -9 of fetch-render in cluster mode (each role its own process on the shared Kafka and
// ClickHouse, one WARC_DIR): a crawl with `warc: true` loses its fetch-render replica twice mid-crawl, a new one takes
// over, and the crawl ends with every stored page in the archives, once by the index; the frontier's retention sweep
// (RETENTION_SWEEP_MS 2 s here) cuts the tail a killed writer tore (its pid, named in the file, is gone), so every file
// is whole to warcio.
import { mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw } from "../../pipeline/store/sql.ts";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, getJson, postJson, waitForEnd } from "./harness.ts";
import { freePort } from "./own-infra.ts";
import { RoleProcesses } from "./role-processes.ts";
import { checkArchives, setUpWarcio, tearDownWarcio } from "./warc-check.ts";

const shared = loadConfig(process.env);
const tag = `w${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
const ch = new ClickHouseClient({ url: shared.clickhouseUrl, user: shared.clickhouseUser, password: shared.clickhousePassword, database: `trawl_${tag}`, caFile: shared.clickhouseCaFile });
const warcDir = mkdtempSync(join(tmpdir(), "trawl-warc-cluster-"));
let site: FixtureSite;
let procs: RoleProcesses | undefined;

beforeAll(async () => {
  await setUpWarcio();
  site = await startFixtureSite({ padBytes: 300_000, delayMs: 60 });
}, 200_000);
afterAll(async () => {
  await procs?.stopAll();
  await site?.close();
  await tearDownWarcio();
  await ch.exec(raw(`DROP DATABASE IF EXISTS ${ch.database}`));
  rmSync(warcDir, { recursive: true, force: true });
}, 120_000);

it("kill -9 of fetch-render while archiving: every stored page archived, listed once, every file whole", async () => {
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  procs = new RoleProcesses({
    TRAWL_MODE: "cluster", KAFKA_BROKERS: shared.kafkaBrokers, CLICKHOUSE_URL: shared.clickhouseUrl, CLICKHOUSE_DATABASE: `trawl_${tag}`,
    KAFKA_TOPIC_PREFIX: `${tag}.`, KAFKA_GROUP_PREFIX: `${tag}.`, KAFKA_PARTITIONS: "2", KAFKA_SESSION_TIMEOUT_MS: "8000", SCHEMA_REGISTRY_URL: "",
    ALLOW_PRIVATE_CRAWL_TARGETS: "true", PORT: String(port), LOG_LEVEL: "warn", WARC_DIR: warcDir, RETENTION_SWEEP_MS: "2000",
    FETCH_CONCURRENCY: "4", MAX_CPU: "1", MAX_RAM: "1",
  }, mkdtempSync(join(tmpdir(), "trawl-warc-cluster-logs-")));
  for (const role of ["api", "frontier", "fetch-render", "convert", "sink"]) procs.spawn(role);
  for (let i = 0; i < 2400 && (await fetch(`${api}/ready`).catch(() => undefined))?.status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  const { body } = await postJson(`${api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000, warc: true });
  const id = body.id as string;
  try {
    for (const atLeast of [8, 25]) {
      for (let i = 0; i < 1200; i++) {
        const now = (await getJson(`${api}/v2/crawl/${id}?limit=1`)).body;
        if (now.status !== "scraping" || now.completed >= atLeast) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      await procs.kill9("fetch-render-0");
      procs.spawn("fetch-render", 0);
    }
    expect((await waitForEnd(api, id, 180_000)).at(-1).status).toBe("completed");
    // the sweep runs every 2 s: the killed writers' files are cut before they are read
    await new Promise((r) => setTimeout(r, 5000));
    const docs = (await allChunks(api, id)).flatMap((c) => c.body.data as { metadata: { sourceURL: string; url?: string } }[]);
    const { cdxj } = await checkArchives(api, "/v2/crawl", id);
    const archived = new Set(cdxj.map(({ entry }) => entry.url));
    for (const d of docs) expect(archived.has(d.metadata.url ?? d.metadata.sourceURL), d.metadata.sourceURL).toBe(true);
    expect(docs.length).toBeGreaterThan(50);
    console.log(`warc-crash-cluster: ${docs.length} pages, ${cdxj.length} index lines, torn tails cut: ${procs.count("torn tails cut")}`);
  } catch (err) {
    console.log(procs.logs(30));
    throw err;
  }
}, 400_000);
