import { describe, expect, it } from "vitest";
import { checkStartUrl } from "./start-url.ts";
import { requestErrorOf } from "../runtime/error-of.testing.ts";

const fails = requestErrorOf;

describe("start URL", () => {
  it("adds a scheme and accepts public hosts", () => {
    expect(checkStartUrl("example.com/docs", false)).toBe("http://example.com/docs");
    expect(checkStartUrl(" https://example.com ", false)).toBe("https://example.com");
  });
  it("refuses private targets unless allowed", () => {
    for (const u of ["http://127.0.0.1:8080/", "http://localhost/", "http://10.1.2.3/", "http://[::1]/", "http://192.168.1.1/"]) {
      expect(fails(() => checkStartUrl(u, false)).message, u).toMatch(/ALLOW_PRIVATE_CRAWL_TARGETS/);
      expect(checkStartUrl(u, true)).toBe(u);
    }
  });
  it("rejects other protocols and hosts without a TLD", () => {
    expect(fails(() => checkStartUrl("ftp://example.com", true)).message).toBe("URL uses unsupported protocol");
    expect(fails(() => checkStartUrl("http://intranet/", false)).message).toBe("URL must have a valid top-level domain or be a valid path");
    expect(fails(() => checkStartUrl("http://", false)).message).toBe("Invalid URL");
  });
});
