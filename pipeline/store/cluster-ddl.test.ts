import { describe, expect, it } from "vitest";
import { clusterMisconfigured, clusterStatement, createdTable, replicaStatement } from "./cluster-ddl.ts";
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

describe("clusterMisconfigured", () => {
  // the answers of ClickHouse 18.16
  it("names CLICKHOUSE_CLUSTER and what the servers lack", () => {
    const nope = new Error("clickhouse statement failed: Code: 170, e.displayText() = DB::Exception: Requested cluster 'nope' not found, e.what() = DB::Exception");
    expect(clusterMisconfigured(nope, "nope")?.message).toMatch(/CLICKHOUSE_CLUSTER="nope" is not a cluster of the ClickHouse server/);
    const macro = new Error("Code: 62, e.displayText() = DB::Exception: There was an error on [127.0.0.1:19421]: Code: 62, e.displayText() = DB::Exception: No macro shard in config");
    expect(clusterMisconfigured(macro, "c")?.message).toMatch(/has no \{shard\} macro/);
    const queue = new Error("Code: 49, e.displayText() = DB::Exception: DDL background thread is not initialized., e.what() = DB::Exception");
    expect(clusterMisconfigured(queue, "c")?.message).toMatch(/no <distributed_ddl> queue/);
  });

  it("leaves other failures alone", () => {
    expect(clusterMisconfigured(new Error("connect ECONNREFUSED 127.0.0.1:8123"), "c")).toBeUndefined();
    expect(clusterMisconfigured(new Error("Code: 62, e.displayText() = DB::Exception: Syntax error"), "c")).toBeUndefined();
  });
});

describe("replicaStatement", () => {
  it("is the replicated CREATE for one replica alone, with the columns added later after the statement's own", () => {
    const s = "CREATE TABLE IF NOT EXISTS d.crawls (crawl_id String, version UInt64) ENGINE = ReplacingMergeTree(version) ORDER BY crawl_id";
    expect(replicaStatement(s, "c", ["tokens_used UInt64 DEFAULT 0"])).toBe(
      "CREATE TABLE IF NOT EXISTS d.crawls (crawl_id String, version UInt64, tokens_used UInt64 DEFAULT 0) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/d/crawls', '{replica}', version) ORDER BY crawl_id",
    );
  });

  it("extends the column list of every table of the migrations, not a default's parentheses", () => {
    for (const m of migrations("d").filter((x) => x.includes("CREATE TABLE"))) {
      const out = replicaStatement(m, "c", ["zz String DEFAULT ''"]);
      expect(out).toMatch(/, zz String DEFAULT ''\)\s*ENGINE = Replicated/);
      expect(out).not.toMatch(/ON CLUSTER/);
    }
  });
});
