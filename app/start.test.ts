import { describe, expect, it } from "vitest";
import { parseDelays, parseProxy, parseResolve, start } from "./start.ts";
import { ConfigError, loadConfig } from "../pipeline/runtime/config.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";

const log = createLogger("silent");

describe("start refuses unsafe or invalid settings before touching anything", () => {
  it("the default admin key on a public HOST", async () => {
    await expect(start(["api"], loadConfig({}, { host: "0.0.0.0" }), log)).rejects.toThrow(/BULL_AUTH_KEY/);
  });
  it("database authentication (not available yet)", async () => {
    await expect(start(["api"], loadConfig({}, { useDbAuthentication: true }), log)).rejects.toThrow(ConfigError);
  });
  it("malformed RESOLVE and WEBHOOK_RETRY_DELAYS_MS, named", () => {
    expect(() => parseResolve("nocolon")).toThrow(/RESOLVE/);
    expect(parseResolve("A.test:127.0.0.1, b.test:::1")).toEqual({ "a.test": "127.0.0.1", "b.test": "::1" });
    expect(() => parseDelays("10,x")).toThrow(/WEBHOOK_RETRY_DELAYS_MS/);
    expect(parseDelays("100, 200")).toEqual([100, 200]);
  });
  it("PROXY_SERVER: host:port or an http(s) URL with a port; anything else is named", async () => {
    const c = (proxyServer: string, proxyUsername = "", proxyPassword = "") => ({ proxyServer, proxyUsername, proxyPassword });
    expect(parseProxy(c(""))).toBeUndefined();
    expect(parseProxy(c("10.0.0.5:3128"))).toEqual({ uri: "http://10.0.0.5:3128" });
    expect(parseProxy(c("https://proxy.test:8443/", "u", "p"))).toEqual({ uri: "https://proxy.test:8443", username: "u", password: "p" });
    for (const bad of ["socks5://p.test:1080", "http://p.test", "::::"]) expect(() => parseProxy(c(bad)), bad).toThrow(/PROXY_SERVER/);
    await expect(start(["api"], loadConfig({}, { proxyServer: "socks5://p.test:1080" }), log)).rejects.toThrow(/PROXY_SERVER/);
  });
});
