// The local-infrastructure scripts never adopt a stranger: a port that is in use is used as is only when the
// server on it proves to be Kafka / ClickHouse / the registry through an API call; a web server there (like the
// shared test corpus on 18080-18089) stops `up` with a message naming the port's variable. Each run has its own
// TRAWL_INFRA_DIR, so nothing is started or stopped in the shared one.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SCRIPTS = join(import.meta.dirname, "..", "..", "scripts");
const infraDir = mkdtempSync(join(tmpdir(), "trawl-infra-"));
let stranger: Server;
let strangerPort = 0;

beforeAll(async () => {
  // a plain web server that answers every path with an HTML page, as the shared corpus does
  stranger = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html><body>Ok.</body></html>"));
  await new Promise<void>((r) => stranger.listen(0, "127.0.0.1", r));
  strangerPort = (stranger.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => stranger.close(() => r()));
  rmSync(infraDir, { recursive: true, force: true });
});

/** Runs a script (asynchronously: the stranger server lives in this process and must keep answering). */
function script(name: string, cmd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn("bash", [join(SCRIPTS, `${name}.sh`), cmd], { env: { ...process.env, TRAWL_INFRA_DIR: infraDir, ...env }, timeout: 60_000 });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, output })));
}

const SHARED = {
  kafka: { TRAWL_KAFKA_PORT: (process.env.KAFKA_BROKERS ?? "127.0.0.1:19092").split(",")[0]!.split(":")[1]! },
  clickhouse: { TRAWL_CLICKHOUSE_HTTP_PORT: new URL(process.env.CLICKHOUSE_URL ?? "http://127.0.0.1:18123").port },
  registry: { TRAWL_REGISTRY_PORT: process.env.TRAWL_REGISTRY_PORT ?? "18181" },
  seaweedfs: { TRAWL_S3_PORT: process.env.TRAWL_S3_PORT ?? "18333" },
};
const PORT_VAR = { kafka: "TRAWL_KAFKA_PORT", clickhouse: "TRAWL_CLICKHOUSE_HTTP_PORT", registry: "TRAWL_REGISTRY_PORT", seaweedfs: "TRAWL_S3_PORT" } as const;

describe("infra scripts on a busy port", () => {
  for (const service of ["kafka", "clickhouse", "registry", "seaweedfs"] as const) {
    it(`${service}: refuses a web server on its port, naming ${PORT_VAR[service]}`, async () => {
      const r = await script(service, "up", { [PORT_VAR[service]]: String(strangerPort) });
      expect(r.code, r.output).not.toBe(0);
      expect(r.output).toContain(`127.0.0.1:${strangerPort} is in use by a process that is not ${service}`);
      expect(r.output).toContain(`set ${PORT_VAR[service]} to a free port`);
      // status: the server, its role in brackets, stopped
      expect((await script(service, "status", { [PORT_VAR[service]]: String(strangerPort) })).output).toMatch(new RegExp(`^${service} \\[[^\\]]+\\]: stopped`, "m"));
    });

    it(`${service}: uses the real ${service} already running on its port as is (identity checked)`, async () => {
      const r = await script(service, "up", SHARED[service]);
      expect(r.code, r.output).toBe(0);
      expect(r.output).toContain(`is in use by a running ${service} (not started by these scripts); using it as is`);
      // nothing was started here, so down stops nothing
      expect((await script(service, "down", SHARED[service])).output).toContain("not running (started by us)");
    });
  }

  it("the registry's default port is outside 18080-18089", async () => {
    const r = await script("registry", "status", { TRAWL_REGISTRY_PORT: "" });
    expect(r.output).toMatch(/127\.0\.0\.1:18181/);
  });
});

// apt_install (scripts/lib.sh) with the real apt-get, on an apt state of its own (APT_CONFIG: no sources, its own
// lists and cache directories, so `apt-get update` needs no network and the machine's lists are not touched) and a
// package that is installed (curl), so nothing is downloaded. Another process holds apt's lock as apt itself takes it
// (fcntl, from python3) for a while: apt-get fails at once on it ("Could not get lock"), which is what a first
// `npm run infra -- up` hit when two services installed at once.
describe("apt_install", () => {
  const aptDir = mkdtempSync(join(tmpdir(), "trawl-apt-"));
  for (const d of ["lists/partial", "cache/archives/partial", "sources.list.d"]) mkdirSync(join(aptDir, d), { recursive: true });
  writeFileSync(join(aptDir, "apt.conf"), [`Dir::Etc::sourcelist "/dev/null";`, `Dir::Etc::sourceparts "${aptDir}/sources.list.d";`, `Dir::State::lists "${aptDir}/lists";`, `Dir::Cache "${aptDir}/cache";`, ""].join("\n"));
  afterAll(() => rmSync(aptDir, { recursive: true, force: true }));

  /** `apt_install curl` in its own bash, with a fresh TRAWL_INFRA_DIR unless given. */
  function aptInstall(dir: string): Promise<{ code: number | null; output: string }> {
    const child = spawn("bash", ["-c", `source ${join(SCRIPTS, "lib.sh")} && apt_install curl`], { env: { ...process.env, TRAWL_INFRA_DIR: dir, APT_CONFIG: join(aptDir, "apt.conf") }, timeout: 60_000 });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    return new Promise((resolve) => child.on("close", (code) => resolve({ code, output })));
  }

  /** Holds `file` with an fcntl write lock, as apt does, until the returned function is called. */
  async function holdAptLock(file: string): Promise<() => Promise<void>> {
    const holder = spawn("python3", ["-c", "import fcntl,os,sys\nfd=os.open(sys.argv[1],os.O_RDWR|os.O_CREAT,0o640)\nfcntl.lockf(fd,fcntl.LOCK_EX)\nprint('held',flush=True)\nsys.stdin.read()", file], { stdio: ["pipe", "pipe", "inherit"] });
    await new Promise<void>((resolve) => holder.stdout.once("data", () => resolve()));
    return () => new Promise<void>((resolve) => { holder.once("close", () => resolve()); holder.stdin.end(); });
  }

  it("two at once on a fresh machine, while another process holds apt's lists lock: both wait, and apt-get update runs once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-infra-apt-"));
    const release = await holdAptLock(join(aptDir, "lists", "lock"));
    const both = Promise.all([aptInstall(dir), aptInstall(dir)]);
    await new Promise((r) => setTimeout(r, 1500));
    await release();
    const [a, b] = await both;
    rmSync(dir, { recursive: true, force: true });
    expect(a.code, a.output).toBe(0);
    expect(b.code, b.output).toBe(0);
    const output = a.output + b.output;
    expect(output).toContain("waiting for a lock held by another process (E: Could not get lock");
    expect(output.match(/\[infra\] apt-get update\n/g), output).toHaveLength(1);
  });

  it("waits while another process holds apt's archives lock (as during another apt-get's download)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-infra-apt-"));
    writeFileSync(join(dir, ".apt-updated"), "");
    const release = await holdAptLock(join(aptDir, "cache", "archives", "lock"));
    const run = aptInstall(dir);
    await new Promise((r) => setTimeout(r, 1500));
    await release();
    const r = await run;
    rmSync(dir, { recursive: true, force: true });
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain("apt-get install: waiting for a lock held by another process");
  });
});
