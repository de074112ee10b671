import { describe, expect, it } from "vitest";
import { convertPage } from "./document.ts";
import { metaKey } from "./html.ts";

const page = (body: string, contentType = "text/html") => ({ url: "https://s.test/a/b", finalUrl: "https://s.test/a/b", statusCode: 200, contentType, body, scrapeId: "id-1" });

describe("convertPage", () => {
  const html = `<html lang="de"><head><title> T </title><base href="https://s.test/base/"><meta name="description" content="D">
    <meta property="og:title" content="OG"><link rel="icon" href="/fav.ico"></head>
    <body><nav><a href="/nav">nav</a></nav><div class="cookie">cookies!</div><article><h2>Head</h2><p>Text <a href="rel">link</a> <img src="i.png"></p>
    <ul><li>one</li><li>two</li></ul></article><footer>foot</footer><script>evil()</script></body></html>`;

  it("extracts metadata, links from the raw HTML and main-content markdown", () => {
    const { document, links } = convertPage(page(html), { formats: ["markdown", "html", "links", "rawHtml"], onlyMainContent: true });
    expect(document.metadata).toMatchObject({ title: "T", language: "de", description: "D", ogTitle: "OG", favicon: "https://s.test/fav.ico", sourceURL: "https://s.test/a/b", statusCode: 200, scrapeId: "id-1" });
    expect(links).toEqual(["https://s.test/nav", "https://s.test/base/rel"]);
    expect(document.links).toEqual(links);
    expect(document.markdown).toContain("## Head");
    expect(document.markdown).toContain("[link](https://s.test/base/rel)");
    expect(document.markdown).toContain("![](https://s.test/base/i.png)");
    expect(document.markdown).toMatch(/-\s+one/);
    expect(document.markdown).not.toMatch(/nav|cookies|foot|evil/);
    expect(document.html).not.toContain("<script");
    expect(document.rawHtml).toBe(html);
  });
  it("keeps the chrome when onlyMainContent is false, and only the requested formats", () => {
    const { document } = convertPage(page(html), { formats: ["markdown"], onlyMainContent: false });
    expect(document.markdown).toContain("foot");
    expect(document.html).toBeUndefined();
    expect(document.links).toBeUndefined();
  });
  it("fences JSON as code", () => {
    const { document } = convertPage(page('{"a":1}', "application/json"), { formats: ["markdown"], onlyMainContent: true });
    expect(document.markdown).toBe('```json\n{"a":1}\n```');
  });
});

describe("metaKey", () => {
  it("camel-cases meta names", () => {
    expect(metaKey("og:locale:alternate")).toBe("ogLocaleAlternate");
    expect(metaKey("dc.terms.created")).toBe("dcTermsCreated");
    expect(metaKey("description")).toBe("description");
  });
});
