import { describe, expect, it } from "vitest";
import { start } from "./start.ts";
import { ConfigError, loadConfig } from "../pipeline/runtime/config.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";

const log = createLogger("silent");

describe("start refuses unsafe or invalid settings before touching anything", () => {
  it("the default admin key on a public HOST", async () => {
    await expect(start(["api"], loadConfig({}, { host: "0.0.0.0" }), log)).rejects.toThrow(/BULL_AUTH_KEY/);
  });
  it("a public HOST without authentication, unless explicitly allowed", async () => {
    await expect(start(["api"], loadConfig({}, { host: "0.0.0.0", adminKey: "a-long-admin-key-0123456789" }), log)).rejects.toThrow(/ALLOW_UNAUTHENTICATED_PUBLIC_HOST/);
    await expect(start(["api"], loadConfig({}, { host: "0.0.0.0", adminKey: "a-long-admin-key-0123456789" }), log)).rejects.toThrow(ConfigError);
  });
});
