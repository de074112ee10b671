import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EmbeddedPageCache, pageCacheKey, type CachedPage } from "./page-cache.ts";

const entry = (key: string, storedAt: number, body = "b"): CachedPage => ({ key, url: "http://s.test/", finalUrl: "http://s.test/", statusCode: 200, contentType: "text/html", body, storedAt });

describe("pageCacheKey", () => {
  it("ignores the fragment and header order and case; distinguishes headers", () => {
    expect(pageCacheKey("http://s.test/a#x")).toBe(pageCacheKey("http://s.test/a"));
    expect(pageCacheKey("http://s.test/a", { A: "1", b: "2" })).toBe(pageCacheKey("http://s.test/a", { b: "2", a: "1" }));
    expect(pageCacheKey("http://s.test/a", { a: "1" })).not.toBe(pageCacheKey("http://s.test/a", { a: "2" }));
    expect(pageCacheKey("http://s.test/a?q=1")).not.toBe(pageCacheKey("http://s.test/a"));
  });
});

describe("EmbeddedPageCache", () => {
  const dir = mkdtempSync(join(tmpdir(), "trawl-cache-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves the newest entry no older than asked, survives a reopen, and drops expired entries at open", async () => {
    const cache = await EmbeddedPageCache.open(dir, 0);
    cache.put([entry("k1", 1000, "old"), entry("k2", 5000, "two")]);
    cache.put([entry("k1", 3000, "new \u00e9\n\"quoted\"")]);
    await cache.close();
    expect((await cache.get("k1", 0))?.body).toBe("new \u00e9\n\"quoted\"");
    expect(await cache.get("k1", 3001)).toBeNull();
    expect(await cache.get("nope", 0)).toBeNull();

    const reopened = await EmbeddedPageCache.open(dir, 2000); // k1@1000 expired
    expect((await reopened.get("k1", 0))?.body).toBe("new \u00e9\n\"quoted\"");
    expect((await reopened.get("k2", 0))?.body).toBe("two");
    await reopened.deleteBefore(4000);
    expect(await reopened.get("k1", 0)).toBeNull();
    expect((await reopened.get("k2", 0))?.body).toBe("two");
    await reopened.close();
  });

  it("memory only without a directory", async () => {
    const cache = await EmbeddedPageCache.open(null, 0);
    cache.put([entry("k", 10)]);
    expect((await cache.get("k", 5))?.body).toBe("b");
    expect(await cache.get("k", 11)).toBeNull();
  });
});
