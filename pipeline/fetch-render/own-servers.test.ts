import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isLocalHost, OwnServers, parseListening, parseStat, serverEndpoints } from "./own-servers.ts";

describe("own servers: parsing", () => {
  it("names the configured servers by host and port", () => {
    expect(serverEndpoints({ kafkaBrokers: "127.0.0.1:19092, kafka-1:9092,[::1]:9093", clickhouseUrl: "http://127.0.0.1:18123,https://ch.example", schemaRegistryUrl: "" })).toEqual([
      { host: "127.0.0.1", port: 19092, variable: "KAFKA_BROKERS" },
      { host: "kafka-1", port: 9092, variable: "KAFKA_BROKERS" },
      { host: "::1", port: 9093, variable: "KAFKA_BROKERS" },
      { host: "127.0.0.1", port: 18123, variable: "CLICKHOUSE_URL" },
      { host: "ch.example", port: 443, variable: "CLICKHOUSE_URL" },
    ]);
  });
  it("knows the local hosts", () => {
    for (const h of ["localhost", "127.0.0.1", "127.0.1.1", "::1", "0.0.0.0", "10.1.2.3"]) expect(isLocalHost(h, new Set(["10.1.2.3"]))).toBe(true);
    for (const h of ["kafka-1", "10.1.2.4", "ch.example"]) expect(isLocalHost(h, new Set(["10.1.2.3"]))).toBe(false);
  });
  it("reads listening sockets and process times from /proc's formats", () => {
    const tcp = [
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 0100007F:4A84 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 10782 1 0000 100 0 0 10 0",
      "   1: 0100007F:4A84 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 20001 1 0000 20 4 30 10 -1",
    ].join("\n");
    expect(parseListening(tcp)).toEqual([{ port: 19076, inode: 10782 }]);
    // the command name may hold spaces and parentheses
    const stat = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 12345 1000 100";
    expect(parseStat(stat)).toEqual({ ppid: 17, cpuS: 3.1, startS: 123.45 });
  });
});

// Real processes on this machine: a listener on a configured port, a child Chromium, and a child that is neither.
describe("own servers on this machine", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) c.kill("SIGKILL");
  });
  /** a Node process listening on an ephemeral port that spins 0.3 s of CPU time on each connection */
  const listener = async (): Promise<{ child: ChildProcess; port: number }> => {
    const spin = "const u = () => process.cpuUsage().user + process.cpuUsage().system; const end = u() + 300000; while (u() < end);";
    const code = `const s = require("node:net").createServer((c) => { ${spin} c.end(); }).listen(0, "127.0.0.1", () => console.log(s.address().port));`;
    const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(child);
    const port = Number(await new Promise<string>((r) => child.stdout!.once("data", (d) => r(String(d)))));
    return { child, port };
  };

  it("finds the process listening on a configured local port, not one on another port, and counts its CPU", async () => {
    const kafka = await listener();
    const other = await listener();
    const own = new OwnServers({ endpoints: [{ host: "127.0.0.1", port: kafka.port, variable: "KAFKA_BROKERS" }, { host: "remote.example", port: other.port, variable: "CLICKHOUSE_URL" }], chromiumPath: "/nonexistent" });
    own.processes();
    await own.scanning;
    const found = own.processes();
    expect(found).toContainEqual({ pid: kafka.child.pid, what: "KAFKA_BROKERS" });
    expect(found.map((p) => p.pid)).not.toContain(other.child.pid);
    expect(found.map((p) => p.pid)).not.toContain(process.pid);
    own.cpuSecondsSince();
    const spun = (port: number) => new Promise((r) => connect(port, "127.0.0.1").on("close", r).on("error", r).resume());
    await spun(kafka.port); // the listener spins 0.3 s of CPU
    await spun(other.port); // and so does the other one, a neighbour
    const used = own.cpuSecondsSince();
    expect(used).toBeGreaterThanOrEqual(0.25);
    expect(used).toBeLessThan(0.5); // the other listener's 0.3 s is not Trawl's
  });

  it("counts a Chromium this process started, with the processes under it, and not another child", async () => {
    const binary = existsSync("/usr/bin/chromium") ? realpathSync("/usr/bin/chromium") : null;
    expect(binary, "this test needs Debian's chromium package").not.toBeNull();
    // Debian's /usr/bin/chromium is a script: its binary is what runs, as Playwright's launch leaves it
    const browser = spawn("/usr/bin/chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0", "about:blank"], { stdio: "ignore" });
    children.push(browser);
    const hog = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    children.push(hog);
    let found: number[] = [];
    for (let i = 0; i < 100 && found.length < 3; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const own = new OwnServers({ endpoints: [], chromiumPath: "/usr/bin/chromium" });
      own.processes(); // starts the walk of the browser's processes, in the background
      await own.walking;
      found = own.processes().filter((p) => p.what === "chromium").map((p) => p.pid);
    }
    expect(found).toContain(browser.pid); // the browser process itself (the script exec'd it)
    expect(found.length).toBeGreaterThanOrEqual(3); // and its zygotes, GPU, utility and renderer processes
    expect(found).not.toContain(hog.pid);
  });
});
