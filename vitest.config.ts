import { defineConfig } from "vitest/config";

/**
 * Integration files that run alone, after the others: they kill or stop servers (brokers, ClickHouse replicas, role
 * processes), start Kafka or ClickHouse of their own, measure how long something stalls or takes (kafka-fetch: latencies under 500 ms), or load both cores for a
 * minute (schemathesis answers within a time limit). Every other integration file runs two at a time beside one other
 * (one Trawl per file, on ephemeral ports, topics and databases named per run): the 55 files then outside this list took 575 s instead of ~970 s
 * one after another on this 2-core machine.
 */
const ALONE = [
  "broker-loss", "clickhouse-cluster", "clickhouse-heal", "clickhouse-tls", "cluster-faults", "commit-rejoin", "crash-embedded", "extract-crash", "infra-layout",
  "kafka-fetch", "kafka-security", "kafka-three-brokers", "load-guard-hog", "record-framing", "reissue", "render-crash", "restart", "schemathesis",
  "team-concurrency", "upload-bombs", "warc-crash", "warc-crash-cluster", "webhook-isolation",
].map((name) => `test/integration/${name}.test.ts`);

const integration = {
  environment: "node" as const,
  globalSetup: ["test/integration/global-setup.ts"],
  // TRAWL_SQL_CAPTURE=<file>: every distinct SQL statement the tests send to ClickHouse (scripts/chdb.sh checks them)
  setupFiles: ["test/integration/sql-capture-setup.ts"],
  testTimeout: 120_000,
  hookTimeout: 240_000,
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          // pure logic, but a busy 2-core machine can make the first compile of every schema take seconds
          testTimeout: 20_000,
          include: ["pipeline/**/*.test.ts", "app/**/*.test.ts", "api/**/*.test.ts", "schemas/**/*.test.ts", "scripts/**/*.test.ts", "clients/**/*.test.ts"],
          environment: "node",
          // the same as the integration project's, which runs at the same time (vitest requires one value per group)
          maxWorkers: 2,
        },
      },
      {
        test: {
          ...integration,
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          exclude: ALONE,
          maxWorkers: 2,
        },
      },
      {
        test: {
          ...integration,
          name: "integration-alone",
          include: ALONE,
          // after the unit and integration projects, one file at a time
          sequence: { groupOrder: 1 },
          fileParallelism: false,
        },
      },
    ],
  },
});
