// `kafka.sh install` never replaces the jars of a running broker (it loads classes from them); with several nodes
// (TRAWL_KAFKA_NODES), any running node counts, as while `up NODE` restarts one of them beside the others.
import { execFile, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";

const run = promisify(execFile);
const script = join(import.meta.dirname, "kafka.sh");
let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

it("keeps a running node's jars when another version is asked for (several nodes)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "trawl-kafka-install-"));
  const libs = join(dir, "kafka", "libs");
  mkdirSync(libs, { recursive: true });
  writeFileSync(join(libs, ".complete"), "0.0.1\n");
  writeFileSync(join(libs, "kafka-server.jar"), "");
  // node 2 runs (a live process of ours stands for it); the others are down
  const node = spawn("sleep", ["60"], { stdio: "ignore" });
  mkdirSync(join(dir, "kafka", "node2"), { recursive: true });
  writeFileSync(join(dir, "kafka", "node2", "kafka.pid"), `${node.pid}\n`);
  // a Maven that fails: an install that went ahead would have removed the jars first, and never downloads here
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "mvn"), "#!/bin/sh\nexit 1\n");
  chmodSync(join(bin, "mvn"), 0o755);
  cleanup = () => {
    node.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}`, TRAWL_INFRA_DIR: dir, TRAWL_KAFKA_NODES: "3" };
  delete env.TRAWL_KAFKA_VERSION;
  const { stderr } = await run("bash", [script, "install"], { env });
  expect(stderr).toContain("running on other jars");
  expect(existsSync(join(libs, "kafka-server.jar"))).toBe(true);
});
