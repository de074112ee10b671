// The local-infrastructure scripts say what they run (issue 49), on real ClickHouse servers in private directories
// (TRAWL_INFRA_DIR) and free ports, never the shared ones:
// - `up` with a number of replicas other than the one running refuses and says how to go from one to the other (it
//   found the single server on replica 1's port, "used it as is" and printed a two-replica CLICKHOUSE_URL);
// - a replica's port held by a ClickHouse these scripts did not start is an error, not adopted;
// - `down` stops what the scripts started whatever the variables (it left the single server running when
//   TRAWL_CLICKHOUSE_REPLICAS said 2);
// - `status` lists each server with its role and port.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { freePortRun } from "./own-infra.ts";

const root = join(import.meta.dirname, "..", "..");
const dirs: string[] = [];

/** Runs scripts/<script>.sh <cmd> with `env` over a private directory; its exit code and output. */
function script(env: Record<string, string>, name: string, cmd: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile("bash", [join(root, "scripts", `${name}.sh`), cmd], { env: { ...process.env, ...env }, timeout: 120_000 }, (error, out, err) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, out: String(out), err: String(err) });
    });
  });
}

/** A private directory and ports for one set of servers: ZooKeeper on `base`, HTTP from +10, native +20, interserver +30. */
function place(base: number): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "trawl-infra-layout-"));
  dirs.push(dir);
  return {
    TRAWL_INFRA_DIR: dir, TRAWL_ZOOKEEPER_PORT: String(base), TRAWL_CLICKHOUSE_HTTP_PORT: String(base + 10),
    TRAWL_CLICKHOUSE_TCP_PORT: String(base + 20), TRAWL_CLICKHOUSE_INTERSERVER_PORT: String(base + 30), TRAWL_CLICKHOUSE_HTTPS_PORT: "",
    TRAWL_CLICKHOUSE_REPLICAS: "", TRAWL_CLICKHOUSE_CLUSTER: "",
  };
}

afterAll(async () => {
  // whatever a failed assertion left running (down stops everything of a directory)
  for (const dir of dirs) {
    await script({ TRAWL_INFRA_DIR: dir }, "clickhouse", "down");
    await script({ TRAWL_INFRA_DIR: dir }, "kafka", "down");
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

it("refuses another replica count, refuses a replica port it did not start, stops everything on down, lists roles and ports", async () => {
  const base = await freePortRun(40, 19600, 19700);
  const a = place(base);
  const http = Number(a.TRAWL_CLICKHOUSE_HTTP_PORT);

  // one server, then two replicas asked for in the same place: refused, with the way from one to the other
  expect((await script(a, "clickhouse", "up")).code).toBe(0);
  const two = await script({ ...a, TRAWL_CLICKHOUSE_REPLICAS: "2" }, "clickhouse", "up");
  expect(two.code, two.err).not.toBe(0);
  expect(two.err).toContain("TRAWL_CLICKHOUSE_REPLICAS=2 asks for 2 replicas of one shard, but these scripts run one server (no cluster)");
  expect(two.err).toContain("npm run infra -- down clickhouse");
  expect(two.out).not.toContain("CLICKHOUSE_URL=");

  // status names each server, its role and its port, whatever the variables say
  const status = await script({ ...a, TRAWL_CLICKHOUSE_REPLICAS: "2" }, "clickhouse", "status");
  expect(status.out).toMatch(new RegExp(`^clickhouse \\[one server, no cluster\\]: running \\(pid \\d+\\) on 127\\.0\\.0\\.1:${http}$`, "m"));

  // down with the other count still stops the server these scripts started
  const down = await script({ ...a, TRAWL_CLICKHOUSE_REPLICAS: "2" }, "clickhouse", "down");
  expect(down.code, down.err).toBe(0);
  expect(await fetch(`http://127.0.0.1:${http}/ping`).then(() => "answers", () => "stopped")).toBe("stopped");

  // a ClickHouse these scripts did not start (another directory's) on replica 1's port: an error for a cluster member
  const b = { ...place(base), TRAWL_INFRA_DIR: mkdtempSync(join(tmpdir(), "trawl-infra-layout-")) };
  dirs.push(b.TRAWL_INFRA_DIR);
  expect((await script(b, "clickhouse", "up")).code).toBe(0);
  const foreign = await script({ ...a, TRAWL_CLICKHOUSE_REPLICAS: "2" }, "clickhouse", "up");
  expect(foreign.code, foreign.err).not.toBe(0);
  expect(foreign.err).toContain(`clickhouse replica 1: 127.0.0.1:${http} is in use by a process these scripts did not start`);
  expect(foreign.err).not.toContain("using it as is");
  expect(foreign.out).not.toContain("CLICKHOUSE_URL=");
}, 180_000);

it("kafka: refuses another node count, says how to go from one to the other, stops its broker on down whatever the variables", async () => {
  const dir = mkdtempSync(join(tmpdir(), "trawl-infra-layout-"));
  dirs.push(dir);
  // Kafka's jars are installed once per machine: reused, as own-infra.ts does
  const libs = join(process.env.TRAWL_INFRA_DIR ?? join(root, ".infra"), "kafka", "libs");
  if (existsSync(join(libs, ".complete"))) {
    mkdirSync(join(dir, "kafka"), { recursive: true });
    symlinkSync(libs, join(dir, "kafka", "libs"));
  }
  const port = await freePortRun(6, 19740, 19800);
  const env = { TRAWL_INFRA_DIR: dir, TRAWL_KAFKA_PORT: String(port), TRAWL_KAFKA_CONTROLLER_PORT: String(port + 1), TRAWL_KAFKA_NODES: "", TRAWL_KAFKA_VERSION: "" };
  const up = await script(env, "kafka", "up");
  expect(up.code, up.err).toBe(0);
  const three = await script({ ...env, TRAWL_KAFKA_NODES: "3" }, "kafka", "up");
  expect(three.code, three.err).not.toBe(0);
  expect(three.err).toContain("TRAWL_KAFKA_NODES=3 asks for 3 node(s), but these scripts run 1");
  expect(three.err).toContain("npm run infra -- down kafka");
  const status = await script({ ...env, TRAWL_KAFKA_NODES: "3" }, "kafka", "status");
  expect(status.out).toMatch(new RegExp(`^kafka \\[broker and controller, one node\\]: running \\(pid \\d+\\) on 127\\.0\\.0\\.1:${port}$`, "m"));
  const down = await script({ ...env, TRAWL_KAFKA_NODES: "3" }, "kafka", "down");
  expect(down.code, down.err).toBe(0);
  expect(down.err).toContain("kafka: stopped");
  expect((await script(env, "kafka", "status")).out).toContain("kafka [broker and controller, one node]: stopped");
}, 180_000);
