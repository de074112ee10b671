// `node bench/retention.ts [checkout]`: one ClickHouse retention sweep over 1,000,000 stored documents that expires 5 %
// of them, with the store code of this checkout or of another one (e.g. the base commit's sources from `git archive`,
// with a node_modules link): wall time of the sweep until the server has finished (mutations done), what it wrote
// (rows and bytes of the parts it created, from system.parts; the server's write_bytes from /proc/<pid>/io, which counts
// everything that server wrote meanwhile) and the documents left. A database of its own on CLICKHOUSE_URL, dropped at
// the end. Layout: 20 days of crawls (50 crawls of 1,000 pages a day, each with its URL states, page webhooks, an error
// per 100 pages and 3 record versions), kept 19 days, so that exactly the oldest day has expired at the sweep.
// Screenshots: BENCH_SHOTS (20,000) images of 8 KB spread over the crawls' pages, swept as the frontier does (the crawl
// store's sweep, then the screenshot store's). BENCH_DOCS (1,000,000) sets the scale.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadConfig } from "../pipeline/runtime/config.ts";

const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."));
const { ClickHouseClient } = (await import(join(root, "pipeline/store/clickhouse.ts"))) as typeof import("../pipeline/store/clickhouse.ts");
const { ClickHouseCrawlStore } = (await import(join(root, "pipeline/store/clickhouse-crawl-store.ts"))) as typeof import("../pipeline/store/clickhouse-crawl-store.ts");
const { migrate } = (await import(join(root, "pipeline/store/migrations.ts"))) as typeof import("../pipeline/store/migrations.ts");
const { raw, sql } = (await import(join(root, "pipeline/store/sql.ts"))) as typeof import("../pipeline/store/sql.ts");
const { ClickHouseScreenshotStore } = (await import(join(root, "pipeline/store/screenshot-store.ts"))) as typeof import("../pipeline/store/screenshot-store.ts");

const DAY = 86_400_000;
const DOCS = Number(process.env.BENCH_DOCS ?? 1_000_000);
const PER_CRAWL = 1000;
const CRAWLS = DOCS / PER_CRAWL;
const DAYS = 20;
const SHOTS = Number(process.env.BENCH_SHOTS ?? 20_000);
const PER_DAY = CRAWLS / DAYS;
const KEEP = (DAYS - 1) * DAY;
const now = Math.floor(Date.now() / DAY) * DAY;
const base = now - DAYS * DAY + 3_600_000;

const config = loadConfig(process.env);
const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: `trawl_bench_retention_${Date.now().toString(36)}` });
const T = (name: string) => ch.table(name);
const q = async (text: string) => ch.query<Record<string, unknown>>(raw(text));
/** INSERT … SELECT straight over HTTP (the client package appends a FORMAT clause, which such a statement refuses). */
async function post(text: string): Promise<void> {
  const auth = Buffer.from(`${config.clickhouseUser}:${config.clickhousePassword}`).toString("base64");
  const res = await fetch(config.clickhouseUrl, { method: "POST", headers: { authorization: `Basic ${auth}` }, body: text });
  if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${await res.text()}`);
}

/** crawl c of day intDiv(c, PER_DAY) starts at `start(c)`; its page n is stored 10 ms apart */
const crawlOf = "intDiv(number, 1000)";
const start = (c: string) => `(${base} + intDiv(${c}, ${PER_DAY}) * ${DAY} + (${c} % ${PER_DAY}) * 60000)`;
const at = `(${start(crawlOf)} + (number % 1000) * 10)`;
const id = (c: string) => `concat('bench-', toString(${c}))`;

async function load(): Promise<void> {
  const withWrittenAt = (await ch.query(sql`SELECT name FROM system.columns WHERE database = ${ch.database} AND table = 'frontier_urls' AND name = 'written_at'`)).length > 0;
  for (let off = 0; off < DOCS; off += 100_000) {
    const from = `numbers(${off + 100_000}) WHERE number >= ${off}`;
    await post(`INSERT INTO ${T("documents")} (crawl_id, seq, url_key, final_key, scrape_id, url, status_code, bytes, credits, stored_at, doc)
      SELECT ${id(crawlOf)}, number % 1000, hex(sipHash64(number)) AS k, k, toString(number), concat('https://site.test/', toString(number)), 200, 600, 1, ${at},
        concat('{"markdown":"', arrayStringConcat(arrayMap(i -> hex(sipHash64(number, i)), range(32))), '"}') FROM ${from}`);
    await post(`INSERT INTO ${T("frontier_urls")} (crawl_id, url_key, url, depth, state, version${withWrittenAt ? ", written_at" : ""})
      SELECT ${id(crawlOf)}, hex(sipHash64(number)), concat('https://site.test/', toString(number)), 1, 2, number % 1000 + 1${withWrittenAt ? `, ${at}` : ""} FROM ${from}`);
    await post(`INSERT INTO ${T("webhook_deliveries")} (crawl_id, event_id, event, url, status_code, attempt, error, at)
      SELECT ${id(crawlOf)}, hex(sipHash64(number, 1)), 'crawl.page', 'https://hook.test/', 200, 1, '', ${at} FROM ${from}`);
    await post(`INSERT INTO ${T("crawl_errors")} (crawl_id, url_key, url, code, error, status_code, at)
      SELECT ${id(crawlOf)}, hex(sipHash64(number)), concat('https://site.test/', toString(number)), 'HTTP_404', 'not found', 404, ${at} FROM ${from} AND number % 100 = 0`);
  }
  // one screenshot every DOCS / SHOTS pages, 8 KB of base64-like text each (hex of hashes: barely compressible)
  if (SHOTS > 0) {
    await post(`INSERT INTO ${T("screenshots")} (job_id, id, type, data_base64, stored_at)
      SELECT ${id(crawlOf)}, toString(number), 'png', arrayStringConcat(arrayMap(i -> hex(sipHash64(number, i)), range(512))), ${at}
      FROM numbers(${DOCS}) WHERE number % ${Math.max(1, Math.round(DOCS / SHOTS))} = 0`);
  }
  // versions 0 and 1 while running, 2 at the end; kept KEEP after the end
  const c = "intDiv(number, 3)";
  const end = `(${start(c)} + 10000)`;
  await post(`INSERT INTO ${T("crawls")} (crawl_id, version, team_id, url, options, webhook, status, total, completed, failed, credits_used, discovery_done, created_at, updated_at, completed_at, expires_at, error)
    SELECT ${id(c)}, number % 3, 'team-bench', 'https://site.test/', '{}', '', if(number % 3 = 2, 'completed', 'scraping'), 1000, 1000, 0, 1000, 1,
      ${start(c)}, if(number % 3 = 2, ${end}, ${start(c)} + (number % 3) * 5000), if(number % 3 = 2, ${end}, 0), if(number % 3 = 2, ${end} + ${KEEP}, 0), '' FROM numbers(${CRAWLS * 3})`);
  await post(`INSERT INTO ${T("idempotency_keys")} (team_id, key, claim_id, at) SELECT 'team-bench', toString(number), toString(number), ${start("number")} FROM numbers(${CRAWLS})`);
}

interface Part { rows: number; bytes: number }
async function parts(): Promise<Map<string, Part>> {
  const rows = await ch.query<{ table: string; name: string; rows: unknown; bytes: unknown }>(
    sql`SELECT table, name, rows, bytes_on_disk AS bytes FROM system.parts WHERE database = ${ch.database} AND active`,
  );
  return new Map(rows.map((r) => [`${r.table}/${r.name}`, { rows: Number(r.rows), bytes: Number(r.bytes) }]));
}

async function settled(): Promise<void> {
  for (;;) {
    const busy = await ch.query<{ n: unknown }>(sql`SELECT (SELECT count() FROM system.merges WHERE database = ${ch.database})
      + (SELECT count() FROM system.mutations WHERE database = ${ch.database} AND is_done = 0) AS n`);
    if (Number(busy[0]?.n) === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function serverWriteBytes(): number | null {
  const pidFile = process.env.CLICKHOUSE_PID_FILE ?? "/work/main/.infra/clickhouse/clickhouse.pid";
  try {
    const pid = readFileSync(pidFile, "utf8").trim();
    return Number(/write_bytes: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1]);
  } catch (err) {
    process.stderr.write(`no /proc io of the ClickHouse server: ${(err as Error).message}\n`);
    return null;
  }
}

const count = async (table: string) => Number((await q(`SELECT count() AS n FROM ${T(table)}`))[0]?.n);

try {
  const legacy = await migrate(ch);
  const store = new ClickHouseCrawlStore(ch, legacy instanceof Set ? legacy : new Set());
  const t0 = performance.now();
  await load();
  for (const t of ["documents", "frontier_urls", "webhook_deliveries", "crawl_errors", "crawls", "idempotency_keys", "screenshots"]) await post(`OPTIMIZE TABLE ${T(t)} FINAL`);
  await settled();
  const loadS = +((performance.now() - t0) / 1000).toFixed(1);
  const before = await parts();
  const storedBytes = [...before.values()].reduce((n, p) => n + p.bytes, 0);
  const docsBefore = await count("documents");
  const shotsBefore = await count("screenshots");
  const shotsMB = +([...before].filter(([k]) => k.startsWith("screenshots/")).reduce((n, [, p]) => n + p.bytes, 0) / 1e6).toFixed(1);
  const io0 = serverWriteBytes();
  const s0 = performance.now();
  const ids = await store.deleteExpired(now, KEEP);
  // as the frontier's sweep: the screenshots of the expired crawls (and of scrapes past the retention) after them
  await new ClickHouseScreenshotStore(ch, legacy instanceof Set ? legacy : new Set()).deleteExpired(ids, now - KEEP);
  const callMs = Math.round(performance.now() - s0);
  await settled();
  const doneMs = Math.round(performance.now() - s0);
  const io1 = serverWriteBytes();
  const after = await parts();
  const written = [...after].filter(([k]) => !before.has(k)).map(([, p]) => p);
  const mutations = await ch.query<{ table: string }>(sql`SELECT table FROM system.mutations WHERE database = ${ch.database}`);
  process.stdout.write(`${JSON.stringify({
    code: root, docs: docsBefore, crawlsExpired: ids.length, docsLeft: await count("documents"), loadS,
    screenshots: shotsBefore, screenshotsMB: shotsMB, screenshotsLeft: await count("screenshots"),
    storedMB: +(storedBytes / 1e6).toFixed(1),
    sweep: {
      callMs, untilServerDoneMs: doneMs, mutations: mutations.length,
      partsWritten: written.length, rowsWritten: written.reduce((n, p) => n + p.rows, 0), mbWritten: +(written.reduce((n, p) => n + p.bytes, 0) / 1e6).toFixed(1),
      serverWriteMB: io0 === null || io1 === null ? null : +((io1 - io0) / 1e6).toFixed(1),
    },
  })}\n`);
} finally {
  await ch.exec(raw(`DROP DATABASE IF EXISTS ${ch.database}`));
}
