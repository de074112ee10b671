import { describe, expect, it } from "vitest";
import { makeDocx } from "../../test/fixtures/docx.ts";
import { convertAny, convertPage, DOCX_TYPE, docxBudgetBytes } from "./document.ts";
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

describe("content options", () => {
  const html = `<html><body><nav>menu</nav><article class="post"><h1>Title</h1><p>Body <span class="ad-inline">buy now</span></p>
    <img src="/small.png" srcset="/a-400.png 400w, /a-1600.png 1600w, /a-800.png 800w" alt="a">
    <img src="data:image/png;base64,iVBORw0KGgo=" alt="inline"></article><aside id="related"><p>Related</p></aside>
    <div class="comments"><p>Comment text</p></div></body></html>`;
  const base = { formats: ["markdown", "html", "images"] as ("markdown" | "html" | "images")[], onlyMainContent: false };

  it("includeTags keeps only the matching elements", () => {
    const { document } = convertPage(page(html), { ...base, includeTags: ["article.post"] });
    expect(document.markdown).toContain("# Title");
    expect(document.markdown).not.toMatch(/menu|Related|Comment/);
  });
  it("excludeTags removes the matching elements", () => {
    const { document } = convertPage(page(html), { ...base, excludeTags: [".comments", "#related", "span.ad-inline"] });
    expect(document.markdown).toContain("menu");
    expect(document.markdown).not.toMatch(/Related|Comment text|buy now/);
  });
  it("takes the largest srcset candidate, lists images, drops base64 images unless told", () => {
    const { document } = convertPage(page(html), base);
    expect(document.images).toEqual(["https://s.test/a-1600.png"]);
    expect(document.markdown).toContain("![a](https://s.test/a-1600.png)");
    expect(document.html).not.toContain("data:image");
    const kept = convertPage(page(html), { ...base, removeBase64Images: false });
    expect(kept.document.html).toContain("data:image/png;base64");
  });
});

describe("convertAny: DOCX", () => {
  const docxPage = (bytes: Buffer) => ({ ...page("", DOCX_TYPE), bytes });
  const options = { formats: ["markdown" as const], onlyMainContent: true };

  it("converts a DOCX page through mammoth and the HTML path", async () => {
    const { document } = await convertAny(docxPage(makeDocx([{ heading: "Annual report" }, { para: "Revenue grew." }])), options);
    expect(document.markdown).toBe("# Annual report\n\nRevenue grew.");
    expect(document.metadata.contentType).toBe("text/html; charset=utf-8");
  });

  it("a DOCX past the budget of its worker's heap is too large, a file that is not one unparseable", async () => {
    // 3 MiB of XML: within the budget of the default heap, past the one of a 64 MB worker (~1.3 MiB)
    const docx = makeDocx([{ para: "x".repeat(3 * 1024 * 1024) }]);
    expect(docxBudgetBytes(64)).toBeLessThan(3 * 1024 * 1024);
    await expect(convertAny(docxPage(docx), options, undefined, 64)).rejects.toMatchObject({ code: "SCRAPE_TOO_LARGE" });
    await expect(convertAny(docxPage(Buffer.from("not a zip")), options)).rejects.toMatchObject({ code: "SCRAPE_UNPARSEABLE" });
  });
});
