// DNS rebinding through the browser: a name that resolves to a public address when it is checked and to 127.0.0.1
// when it is connected to. The scenario needs a resolver of its own, so it runs in a private network and mount
// namespace (unshare, as root: CI runs as root), with a test DNS server bound over /etc/resolv.conf's: see
// test/fixtures/rebinding-probe.ts. The browser's WebSocket must reach the address that was checked, never
// loopback. (The embedded mode runs it; the browser and its guard are the same code in the cluster's render role.)
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PUBLIC_TEST_ADDRESS } from "../fixtures/public-address.ts";

const root = join(import.meta.dirname, "..", "..");

function inNamespace(script: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "trawl-rebind-"));
  writeFileSync(join(dir, "resolv.conf"), "nameserver 127.0.0.1\noptions attempts:1 timeout:1\n");
  const setup = [
    "set -e", "ip link set lo up", `ip addr add ${PUBLIC_TEST_ADDRESS}/32 dev lo`, `mount --bind ${join(dir, "resolv.conf")} /etc/resolv.conf`,
    `exec ${join(root, "node_modules", ".bin", "node")} ${script}`,
  ].join("\n");
  return new Promise((resolve, reject) => {
    execFile("unshare", ["--net", "--mount", "--propagation", "private", "--", "bash", "-c", setup], { cwd: root, timeout: 90_000, env: { ...process.env, LOG_LEVEL: "error" } }, (err, stdout, stderr) => {
      rmSync(dir, { recursive: true, force: true });
      if (err) reject(new Error(`the namespace probe failed: ${err.message}\n${stderr}`, { cause: err }));
      else resolve(stdout);
    });
  });
}

describe("DNS rebinding through the browser", () => {
  it("a WebSocket to a name answered public, then 127.0.0.1, connects to the public address it checked: zero loopback connections", async () => {
    const out = await inNamespace(join(root, "test", "fixtures", "rebinding-probe.ts"));
    const result = JSON.parse(out.trim().split("\n").at(-1) as string);
    expect(result.status, out).toBe(200);
    expect(result.markdown).toContain("REBINDING PAGE");
    expect(result.asked, "the name was looked up").toBeGreaterThanOrEqual(1);
    expect(result.loopbackAccepts).toBe(0);
    expect(result.publicAccepts, "the browser's WebSocket went to the address that was checked").toBe(1);
  });
});
