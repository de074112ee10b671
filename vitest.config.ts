import { defineConfig } from "vitest/config";

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
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/integration/global-setup.ts"],
          // TRAWL_SQL_CAPTURE=<file>: every distinct SQL statement the tests send to ClickHouse (scripts/chdb.sh checks them)
          setupFiles: ["test/integration/sql-capture-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          // one Trawl instance per file; files run one after another (2 cores, shared Kafka and ClickHouse)
          fileParallelism: false,
        },
      },
    ],
  },
});
