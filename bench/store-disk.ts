// `node bench/store-disk.ts [checkout]`: disk used by an embedded store that runs without a restart for HOURS simulated
// hours (a clock passed in), with the store code of this checkout or of another one (e.g. the base commit's sources
// from `git archive`, with a node_modules link). Each hour one crawl of MB_PER_HOUR megabytes of documents (20 KB each)
// completes and expires 24 h later; the retention sweep runs every 10 simulated minutes, as RETENTION_SWEEP_MS would.
// Prints the bytes under DATA_DIR/store at each day's end and at the end.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."));
const { EmbeddedCrawlStore } = (await import(join(root, "pipeline/store/embedded-crawl-store.ts"))) as typeof import("../pipeline/store/embedded-crawl-store.ts");

const HOURS = Number(process.env.HOURS ?? 72);
const MB_PER_HOUR = Number(process.env.MB_PER_HOUR ?? 4);
const HOUR = 3_600_000;
const RETENTION = 24 * HOUR;
const DOC = 20 * 1024;
const T0 = 1_764_000_000_000;

const dir = mkdtempSync(join(tmpdir(), "trawl-store-disk-"));
const storeBytes = () => readdirSync(join(dir, "store"), { recursive: true, encoding: "utf8" }).reduce((sum, f) => {
  const st = statSync(join(dir, "store", f));
  return st.isFile() ? sum + st.size : sum;
}, 0);
const mb = (b: number) => +(b / 1048576).toFixed(1);

try {
  const store = await EmbeddedCrawlStore.open(dir, T0);
  const body = "x".repeat(DOC);
  const perHour = Math.round((MB_PER_HOUR * 1048576) / DOC);
  const days: number[] = [];
  let peak = 0;
  for (let h = 0; h < HOURS; h++) {
    const crawlId = `crawl-${h}`;
    const start = T0 + h * HOUR;
    await store.saveCrawls([{
      crawlId, version: 1, teamId: "t", url: "https://s.test/", webhook: "", status: "completed", total: perHour, completed: perHour, failed: 0, creditsUsed: 0,
      tokensUsed: 0, discoveryDone: true, createdAt: start, updatedAt: start, completedAt: start + HOUR, expiresAt: start + HOUR + RETENTION, error: "",
      options: { limit: perHour, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
    }]);
    for (let tick = 0; tick < 6; tick++) {
      const now = start + tick * 10 * 60_000;
      const rows = [];
      for (let i = Math.floor((perHour * tick) / 6); i < Math.floor((perHour * (tick + 1)) / 6); i++) {
        rows.push({ crawlId, seq: i, urlKey: `k${i}`, finalKey: `k${i}`, scrapeId: `${crawlId}-${i}`, url: `https://s.test/${i}`, statusCode: 200, credits: 1, storedAt: now, doc: JSON.stringify({ markdown: body, metadata: { i } }) });
      }
      await store.insertDocuments(rows);
      await store.deleteExpired(now, RETENTION);
      peak = Math.max(peak, storeBytes());
    }
    if ((h + 1) % 24 === 0) days.push(mb(storeBytes()));
  }
  await store.close();
  console.log(JSON.stringify({ root, hours: HOURS, mbPerHour: MB_PER_HOUR, storeMBAtEachDayEnd: days, storeMBAtEnd: mb(storeBytes()), peakStoreMB: mb(peak) }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
