// The local-infrastructure scripts never adopt a stranger: a port that is in use is used as is only when the
// server on it proves to be Kafka / ClickHouse / the registry through an API call; a web server there (like the
// shared test corpus on 18080-18089) stops `up` with a message naming the port's variable. Each run has its own
// TRAWL_INFRA_DIR, so nothing is started or stopped in the shared one.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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
};
const PORT_VAR = { kafka: "TRAWL_KAFKA_PORT", clickhouse: "TRAWL_CLICKHOUSE_HTTP_PORT", registry: "TRAWL_REGISTRY_PORT" } as const;

describe("infra scripts on a busy port", () => {
  for (const service of ["kafka", "clickhouse", "registry"] as const) {
    it(`${service}: refuses a web server on its port, naming ${PORT_VAR[service]}`, async () => {
      const r = await script(service, "up", { [PORT_VAR[service]]: String(strangerPort) });
      expect(r.code, r.output).not.toBe(0);
      expect(r.output).toContain(`127.0.0.1:${strangerPort} is in use by a process that is not ${service}`);
      expect(r.output).toContain(`set ${PORT_VAR[service]} to a free port`);
      expect((await script(service, "status", { [PORT_VAR[service]]: String(strangerPort) })).output).toContain(`${service}: stopped`);
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
