// Writes the `config:` and `secrets:` blocks of helm/trawl/values.yaml from the configuration table
// (pipeline/runtime/config.ts), so that the chart's ConfigMap and Secret carry exactly the variables Trawl reads.
// `npm run gen:helm` rewrites the block; `--check` exits 1 when the file differs (run by npm run check:deploy).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { configVars } from "../pipeline/runtime/config.ts";

export const VALUES_PATH = fileURLToPath(new URL("../helm/trawl/values.yaml", import.meta.url));
const BEGIN = "# BEGIN generated configuration";
const END = "# END generated configuration";

/** Where the chart's default differs from the program's, and why. */
export const CHART_DEFAULTS: Record<string, string> = {
  TRAWL_MODE: "cluster", // the chart runs the roles apart, on Kafka and ClickHouse
  HOST: "0.0.0.0", // reachable through the pod's IP
  METRICS_PORT: "9464", // every role without the API serves /metrics, /health, /ready here
  KAFKA_BROKERS: "kafka:9092", // external Kafka: set it to your brokers
  CLICKHOUSE_URL: "http://clickhouse:8123", // external ClickHouse: set it to your server
  USE_DB_AUTHENTICATION: "true", // a public API needs keys
  KAFKA_PARTITIONS: "12", // roles scale out to several replicas each (a role's replicas beyond its topic's partitions idle)
};

interface Spec { env: string; default: string; description: string; secret?: boolean }

const yamlString = (s: string) => JSON.stringify(s);

/** The generated block, markers included. */
export function helmConfigBlock(): string {
  const specs = Object.values(configVars) as Spec[];
  const entry = (s: Spec) => [`  # ${s.description.replace(/\s+/g, " ")}`, `  ${s.env}: ${yamlString(CHART_DEFAULTS[s.env] ?? s.default)}`];
  return [
    `${BEGIN} (npm run gen:helm, from pipeline/runtime/config.ts: edit the table, not this block)`,
    "# Every variable of the configuration table: plain ones go to the ConfigMap, keys and passwords to the Secret.",
    "config:",
    ...specs.filter((s) => !s.secret).flatMap(entry),
    "secrets:",
    ...specs.filter((s) => s.secret).flatMap(entry),
    END,
  ].join("\n");
}

/** values.yaml with its generated block replaced. */
export function withGeneratedBlock(values: string): string {
  const start = values.indexOf(BEGIN);
  const end = values.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${VALUES_PATH}: markers "${BEGIN}" and "${END}" not found`);
  return values.slice(0, start) + helmConfigBlock() + values.slice(end + END.length);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const current = readFileSync(VALUES_PATH, "utf8");
  const next = withGeneratedBlock(current);
  if (process.argv.includes("--check")) {
    if (next !== current) {
      console.error("helm/trawl/values.yaml is out of date with pipeline/runtime/config.ts: run npm run gen:helm");
      process.exit(1);
    }
    console.log("helm values match the configuration table");
  } else {
    writeFileSync(VALUES_PATH, next);
    console.log(`wrote ${VALUES_PATH}`);
  }
}
