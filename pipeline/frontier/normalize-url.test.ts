import { describe, expect, it } from "vitest";
import { resolveLink, urlKey } from "./normalize-url.ts";

describe("resolveLink", () => {
  it("resolves relative links and drops fragments and credentials", () => {
    expect(resolveLink("../b/c.html#x", "https://s.test/docs/a/")).toBe("https://s.test/docs/b/c.html");
    expect(resolveLink("//other.test/p", "https://s.test/")).toBe("https://other.test/p");
    expect(resolveLink("https://u:p@s.test/x#y")).toBe("https://s.test/x");
    expect(resolveLink("?q=1", "https://s.test/a")).toBe("https://s.test/a?q=1");
  });
  it("rejects what cannot be crawled", () => {
    for (const href of ["mailto:a@b.c", "javascript:void(0)", "tel:123", "data:text/html,x", "ftp://s.test/x", "", "   ", "http://"]) {
      expect(resolveLink(href, "https://s.test/"), href).toBeNull();
    }
  });
  it("a bare fragment resolves to the page itself", () => {
    expect(resolveLink("#top", "https://s.test/a")).toBe("https://s.test/a");
  });
});

describe("urlKey", () => {
  const same = (a: string, b: string) => expect(urlKey(a)).toBe(urlKey(b));
  it("merges www/bare, http/https, trailing slash and index files", () => {
    same("http://www.s.test/docs/", "https://s.test/docs");
    same("https://s.test/docs/index.html", "https://s.test/docs/");
    same("https://s.test/docs/index.php", "https://s.test/docs");
    same("https://s.test/", "https://s.test");
    same("https://S.TEST/a", "https://s.test/a");
    same("https://s.test:443/a", "https://s.test/a");
  });
  it("orders query parameters and keeps them unless told", () => {
    same("https://s.test/a?b=2&a=1", "https://s.test/a?a=1&b=2");
    expect(urlKey("https://s.test/a?x=1")).not.toBe(urlKey("https://s.test/a?x=2"));
    expect(urlKey("https://s.test/a?x=1", { ignoreQueryParameters: true })).toBe(urlKey("https://s.test/a"));
  });
  it("keeps distinct paths distinct", () => {
    expect(urlKey("https://s.test/a")).not.toBe(urlKey("https://s.test/a/b"));
    expect(urlKey("https://s.test/a.html")).not.toBe(urlKey("https://s.test/a"));
    expect(urlKey("https://s.test/A")).not.toBe(urlKey("https://s.test/a"));
  });
  it("without deduplicateSimilarURLs only exact URLs merge", () => {
    const o = { deduplicateSimilarURLs: false };
    expect(urlKey("http://s.test/a", o)).not.toBe(urlKey("https://s.test/a", o));
    expect(urlKey("https://s.test/a/", o)).not.toBe(urlKey("https://s.test/a", o));
    expect(urlKey("https://s.test/a#x", o)).toBe(urlKey("https://s.test/a", o));
  });
});
