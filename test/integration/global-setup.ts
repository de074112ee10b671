// Starts the real local infrastructure (Kafka in KRaft mode, ClickHouse, the Schema Registry, SeaweedFS's S3 API for
// WARC_S3_URL: s3-server.ts) through the project's scripts,
// removes what earlier runs left in it (leftovers.ts), and at the end stops only what it started.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { removeLeftovers } from "./leftovers.ts";

const script = join(import.meta.dirname, "..", "..", "scripts", "infra.sh");
const services = ["kafka", "clickhouse", "registry", "seaweedfs"] as const;

function running(service: string): boolean {
  const out = execFileSync("bash", [script, "status", service], { encoding: "utf8" });
  return out.includes("running");
}

export default async function setup(): Promise<() => void> {
  const externally = process.env.KAFKA_BROKERS !== undefined && process.env.CLICKHOUSE_URL !== undefined;
  if (externally) return () => {};
  const started = services.filter((s) => !running(s));
  if (started.length) execFileSync("bash", [script, "up", ...started], { stdio: "inherit" });
  try {
    const removed = await removeLeftovers();
    if (removed.topics || removed.databases) console.log(`[test setup] removed what earlier runs left: ${removed.topics} topics, ${removed.databases} databases`);
  } catch (err) {
    console.warn(`[test setup] could not remove earlier runs' topics and databases: ${(err as Error).message}`);
  }
  return () => {
    if (started.length && !process.env.TRAWL_KEEP_INFRA) execFileSync("bash", [script, "down", ...started], { stdio: "inherit" });
  };
}
