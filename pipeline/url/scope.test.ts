import { describe, expect, it } from "vitest";
import { inScope, isChildPath, patternError } from "./scope.ts";

const opts = { crawlEntireDomain: false, allowSubdomains: false };

describe("inScope", () => {
  it("keeps children of the start path and skips other parents", () => {
    expect(inScope("https://s.test/blogs/", "https://s.test/blogs/post-1", opts)).toBe("ok");
    expect(inScope("https://s.test/blogs/", "https://s.test/other-parent/page", opts)).toBe("outside-path");
    expect(inScope("https://s.test/blogs", "https://s.test/blogs-old/x", opts)).toBe("outside-path");
    expect(inScope("https://s.test/blogs", "https://s.test/blogs/x", opts)).toBe("ok");
    expect(inScope("https://s.test/", "https://s.test/anything/at/all", opts)).toBe("ok");
  });
  it("crawlEntireDomain lifts the path rule", () => {
    expect(inScope("https://s.test/blogs/", "https://s.test/other-parent/page", { ...opts, crawlEntireDomain: true })).toBe("ok");
  });
  it("treats www and bare host as one site, other hosts as external", () => {
    expect(inScope("https://www.s.test/", "https://s.test/a", opts)).toBe("ok");
    expect(inScope("https://s.test/", "https://other.test/a", opts)).toBe("external");
    expect(inScope("https://s.test/", "https://a.s.test/a", opts)).toBe("external");
  });
  it("allowSubdomains admits subdomains of the start host only", () => {
    const o = { ...opts, allowSubdomains: true };
    expect(inScope("https://s.test/", "https://a.s.test/a", o)).toBe("ok");
    expect(inScope("https://s.test/", "https://b.a.s.test/a", o)).toBe("ok");
    expect(inScope("https://s.test/", "https://evil-s.test/a", o)).toBe("external");
  });
  it("skips binary file types but keeps pdf and xml", () => {
    expect(inScope("https://s.test/", "https://s.test/logo.PNG", opts)).toBe("skipped-file-type");
    expect(inScope("https://s.test/", "https://s.test/app.js", opts)).toBe("skipped-file-type");
    expect(inScope("https://s.test/", "https://s.test/doc.pdf", opts)).toBe("ok");
    expect(inScope("https://s.test/", "https://s.test/feed.xml", opts)).toBe("ok");
  });
});

describe("isChildPath", () => {
  it("handles the start path with and without a trailing slash", () => {
    expect(isChildPath("/docs/", "/docs")).toBe(true);
    expect(isChildPath("/docs/", "/docs/a")).toBe(true);
    expect(isChildPath("/docs", "/docs/")).toBe(true);
    expect(isChildPath("/docs", "/doc")).toBe(false);
    expect(isChildPath("/docs/a.html", "/docs/b.html")).toBe(false);
  });
});

describe("inScope with options", () => {
  const base = { crawlEntireDomain: false, allowSubdomains: false };
  it("matches include/exclude against the path, or the full URL with regexOnFullURL", () => {
    const o = { ...base, crawlEntireDomain: true, includePaths: ["^/blog/"], excludePaths: ["draft"] };
    expect(inScope("https://s.test/", "https://s.test/blog/a", o)).toBe("ok");
    expect(inScope("https://s.test/", "https://s.test/shop/a", o)).toBe("not-included");
    expect(inScope("https://s.test/", "https://s.test/blog/draft-1", o)).toBe("excluded");
    // the query string is not part of the path
    expect(inScope("https://s.test/", "https://s.test/blog/a?draft=1", o)).toBe("ok");
    expect(inScope("https://s.test/", "https://s.test/blog/a?draft=1", { ...o, regexOnFullURL: true, includePaths: ["^https://s\\.test/blog/"] })).toBe("excluded");
  });
  it("subdomains by registrable domain (public suffix aware)", () => {
    const o = { ...base, allowSubdomains: true };
    expect(inScope("https://www.example.co.uk/", "https://docs.example.co.uk/a", o)).toBe("ok");
    expect(inScope("https://example.co.uk/", "https://other.co.uk/a", o)).toBe("external");
  });
  it("external links: one hop out from an internal page, never to social sites or a bare root", () => {
    const o = { ...base, allowExternalLinks: true, crawlEntireDomain: true };
    expect(inScope("https://s.test/", "https://other.test/docs/x", o, "https://s.test/page")).toBe("ok");
    expect(inScope("https://s.test/", "https://other.test/", o, "https://s.test/page")).toBe("external");
    expect(inScope("https://s.test/", "https://third.test/x", o, "https://other.test/docs/x")).toBe("external");
    expect(inScope("https://s.test/", "https://github.com/org/repo", o, "https://s.test/page")).toBe("external");
  });
  it("validates patterns as RE2", () => {
    expect(patternError("^/docs/(a|b)+$")).toBeNull();
    expect(patternError("(?<=x)y")).toMatch(/invalid|unsupported/);
    expect(patternError("(a)\\1")).toMatch(/invalid/);
  });
});
