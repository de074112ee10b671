// Test runs leave topics and databases behind when they crash or are interrupted (and each file's topics stay in the
// broker: `rm -rf .infra/kafka/data` used to be the only way out). A development Kafka that had collected 11,000-20,000
// test partitions burned 12 % of a core while idle and at 20,000 stopped with "Too many open files". Before a run, what
// an earlier run left is removed: names carry the time their test started (harness.ts, cluster-faults, extract-crash,
// registry tests), and only those older than two hours go, so a run going on beside this one keeps its own.
import { createKafka } from "../../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw } from "../../pipeline/store/sql.ts";

const OLDER_THAN_MS = 2 * 3600 * 1000;
/** A test tag: a letter code, then Date.now() in base 36 (8 digits), then maybe 6 hex digits of randomness. */
const TAG = /^(?:t|f|x|reject|teamid)([0-9a-z]{8})(?:[0-9a-f]{6})?$/;

/** When the tag that begins `name` (up to `sep`) was made, or null when it is not a test tag. */
export function testTagTime(name: string, sep: string): number | null {
  const tag = name.split(sep)[0] ?? "";
  const m = TAG.exec(tag);
  if (!m) return null;
  const t = parseInt(m[1] as string, 36);
  return t > Date.UTC(2024, 0, 1) && t < Date.now() + 86_400_000 ? t : null;
}

const stale = (t: number | null, now: number) => t !== null && now - t > OLDER_THAN_MS;

/** Deletes earlier runs' test topics and databases; how many of each. */
export async function removeLeftovers(now = Date.now()): Promise<{ topics: number; databases: number }> {
  const config = loadConfig(process.env);
  const kafka = createKafka(config, "test-cleanup", createLogger("silent"));
  const admin = kafka.admin();
  let topics: string[];
  try {
    topics = (await admin.listTopics()).filter((t) => stale(testTagTime(t, "."), now));
    // in slices: one request naming thousands of topics can outlast the request timeout
    for (let i = 0; i < topics.length; i += 200) await admin.deleteTopics({ topics: topics.slice(i, i + 200) });
  } finally {
    await admin.close();
  }
  const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: "system" });
  const dbs = (await ch.query<{ name: string }>(raw("SELECT name FROM system.databases WHERE name LIKE 'trawl%'")))
    .map((r) => r.name)
    .filter((n) => n.startsWith("trawl_") && stale(testTagTime(n.slice("trawl_".length), "."), now));
  for (const db of dbs) await ch.exec(raw(`DROP DATABASE IF EXISTS \`${db}\``));
  return { topics: topics.length, databases: dbs.length };
}
