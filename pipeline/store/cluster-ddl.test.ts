import { describe, expect, it } from "vitest";
import { clusterStatement, createdTable } from "./cluster-ddl.ts";
import { migrations } from "./migrations.ts";

describe("clusterStatement", () => {
  it("runs CREATE DATABASE on the cluster", () => {
    expect(clusterStatement("CREATE DATABASE IF NOT EXISTS trawl", "main")).toBe("CREATE DATABASE IF NOT EXISTS trawl ON CLUSTER 'main'");
  });

  it("replicates a ReplacingMergeTree with its version column, the path built from database and table", () => {
    const s = `CREATE TABLE IF NOT EXISTS trawl.crawls (crawl_id String, version UInt64)
      ENGINE = ReplacingMergeTree(version) ORDER BY crawl_id`;
    expect(clusterStatement(s, "main")).toBe(`CREATE TABLE IF NOT EXISTS trawl.crawls ON CLUSTER 'main' (crawl_id String, version UInt64)
      ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/trawl/crawls', '{replica}', version) ORDER BY crawl_id`);
  });

  it("replicates a MergeTree and keeps its settings", () => {
    const s = "CREATE TABLE IF NOT EXISTS d.documents (a String) ENGINE = MergeTree() ORDER BY (a) SETTINGS index_granularity = 64";
    expect(clusterStatement(s, "c")).toBe(
      "CREATE TABLE IF NOT EXISTS d.documents ON CLUSTER 'c' (a String) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/d/documents', '{replica}') ORDER BY (a) SETTINGS index_granularity = 64",
    );
  });

  it("quotes a cluster name as a string literal (a name with a dash, or a hostile one)", () => {
    expect(clusterStatement("CREATE DATABASE IF NOT EXISTS d", "dc-1")).toBe("CREATE DATABASE IF NOT EXISTS d ON CLUSTER 'dc-1'");
    expect(clusterStatement("CREATE DATABASE IF NOT EXISTS d", "x' OR 1")).toBe("CREATE DATABASE IF NOT EXISTS d ON CLUSTER 'x\\' OR 1'");
  });

  it("leaves other statements as they are", () => {
    const alter = "ALTER TABLE d.crawls ADD COLUMN tokens_used UInt64 DEFAULT 0";
    expect(clusterStatement(alter, "c")).toBe(alter);
  });

  it("gives every table of the migrations a Replicated engine and ON CLUSTER", () => {
    const all = migrations("trawl").map((s) => clusterStatement(s, "c"));
    for (const s of all) {
      expect(s).toContain("ON CLUSTER 'c'");
      const t = createdTable(s);
      if (!t) continue;
      expect(s).toContain("ENGINE = Replicated");
      expect(s).toContain(`'/clickhouse/tables/{shard}/trawl/${t.table}', '{replica}'`);
    }
    expect(all.filter((s) => createdTable(s)).length).toBe(all.length - 1);
  });
});
