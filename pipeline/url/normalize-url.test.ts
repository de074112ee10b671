import { describe, expect, it } from "vitest";
import { HrefResolver, resolveHref, resolveLink, urlKey } from "./normalize-url.ts";

describe("HrefResolver", () => {
  it("gives what resolveHref gives, sharing the resolution of a target among its fragments", () => {
    const base = "https://s.test/docs/a/page.html?x=1#here";
    const hrefs = [
      "os.html", "os.html#os.path.join", "os.html#a#b", "os.html#with space", "os.html#caf\u00e9", "os.html#<x>", "os.html#q`",
      "  os.html#x", "os.html#x  ", "os.html?#x", "#", "#top", "page.html#", "https://u:p@s.test/x#y", "https://u:p@s.test/x",
      "mailto:a@b.c#x", "javascript:void(0)#x", "http://#x", "../b/c.html#%41", "//other.test/p#f", "data:text/plain,a#b",
      "page.html #x", "page.html\t#x", " page.html#x", "a b.html#x",
    ];
    const resolver = new HrefResolver(base);
    for (const href of [...hrefs, ...hrefs]) expect(resolver.resolve(href), href).toEqual(resolveHref(href, base));
    for (const href of hrefs) expect(new HrefResolver(base).link(href), href).toBe(resolveHref(href, base).link);
  });
  it("joins simple relative paths to the base directory as the URL parser does", () => {
    const hrefs = [
      "datatype.html", "datatype.html#DATATYPE-JSON", "a/b/c.html", "../x.html", "../../x.html", "../../../../../x.html", "../",
      "../lib/os.html#os.path", "-x", "_y.z", "a..b", "x.", "A-b_C.9", "a/", "dir/../x.html", "./x.html", ".hidden", "x%2e", "x y", "ü.html",
    ];
    const bases = ["https://s.test/docs/a/page.html?x=1#f", "https://s.test", "https://s.test/", "http://s.test:8080/a/b/", "https://s.test/a//b/c", "https://u:p@s.test/a/b", "file:///tmp/a/b", "https://s.test/%7Ea/b"];
    for (const base of bases) {
      const resolver = new HrefResolver(base);
      for (const href of hrefs) expect(resolver.resolve(href), `${href} against ${base}`).toEqual(resolveHref(href, base));
    }
  });
  it("a link never keeps a fragment, an empty one included", () => {
    expect(resolveHref("page.html#", "https://s.test/").link).toBe("https://s.test/page.html");
    expect(resolveHref("page.html#", "https://s.test/").absolute).toBe("https://s.test/page.html#");
  });
});

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
