// Decompression bombs, in both modes: a ~1 MB gzipped sitemap that inflates to 1 GiB is skipped with a crawl warning
// (SITEMAP_TOO_LARGE) and a page whose gzip Content-Encoding inflates past FETCH_MAX_BYTES fails with
// SCRAPE_TOO_LARGE, and so do PDFs whose content inflates to 160 MiB (one Flate layer, four, a lone CR after `stream`,
// LZW), while memory stays bounded and the crawl completes; honest compressed pages still convert. POST /v2/map answers the links it could get with a warning
// that names each sitemap it skipped (the gzip bomb, a plain sitemap over FETCH_MAX_BYTES, a Content-Encoding bomb).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deflatedZeros, pdfWithFlateContent } from "../fixtures/pdf.ts";
import { lzwZeros } from "../fixtures/pdf-lzw.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

/** 1 GiB of zeros as ~1 MB of gzip: 64 MiB streamed through gzip once, then that member 16 times (gzip allows
 * concatenated members, and every decoder inflates them all). */
function gzipBomb(): Buffer {
  const member = gzipSync(Buffer.alloc(64 << 20), { level: 9 });
  return Buffer.concat(Array.from({ length: 16 }, () => member));
}

const page = (title: string, links: string[]) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>Text of ${title}.</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</main></body></html>`;

let server: Server;
let origin = "";
const bomb = gzipBomb();
let pdfBomb: Buffer;
/** the shapes the PDF guard once missed (issue 50, finding 4): a fourth Flate layer, a lone CR after `stream`, LZW */
const shapes: Record<string, Buffer> = {};
/** a plain sitemap of ~11 MB: over FETCH_MAX_BYTES (10 MiB) */
const hugeSitemap = `<?xml version="1.0"?><urlset>${"<url><loc>http://127.0.0.1/huge/page</loc></url>".repeat(230_000)}</urlset>`;
const urlset = (locs: string[]) => `<?xml version="1.0"?><urlset>${locs.map((l) => `<url><loc>${l}</loc></url>`).join("")}</urlset>`;

beforeAll(async () => {
  pdfBomb = pdfWithFlateContent(await deflatedZeros(160)); // ~160 KB, 160 MiB inflated
  const zeros = await deflatedZeros(160);
  shapes["/docs/layers.pdf"] = pdfWithFlateContent(deflateSync(deflateSync(deflateSync(zeros))), "[/FlateDecode /FlateDecode /FlateDecode /FlateDecode]");
  shapes["/docs/cr.pdf"] = pdfWithFlateContent(zeros, "/FlateDecode", "\r");
  shapes["/docs/lzw.pdf"] = pdfWithFlateContent(lzwZeros(160), "/LZWDecode");
  server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const html = { "content-type": "text/html; charset=utf-8" };
    if (path === "/robots.txt") return res.writeHead(200, { "content-type": "text/plain" }).end(`User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap-bomb.xml.gz\n`);
    if (path === "/sitemap-bomb.xml.gz") return res.writeHead(200, { "content-type": "application/gzip" }).end(bomb);
    if (path === "/docs/") return res.writeHead(200, html).end(page("Home", ["/docs/gzip", "/docs/br", "/docs/deflate", "/docs/bomb", "/docs/bomb.pdf", ...Object.keys(shapes)]));
    if (path === "/docs/gzip") return res.writeHead(200, { ...html, "content-encoding": "gzip" }).end(gzipSync(page("Gzipped", [])));
    if (path === "/docs/br") return res.writeHead(200, { ...html, "content-encoding": "br" }).end(brotliCompressSync(page("Brotli", [])));
    if (path === "/docs/deflate") return res.writeHead(200, { ...html, "content-encoding": "deflate" }).end(deflateSync(page("Deflated", [])));
    if (path === "/docs/bomb.pdf") return res.writeHead(200, { "content-type": "application/pdf" }).end(pdfBomb);
    if (shapes[path]) return res.writeHead(200, { "content-type": "application/pdf" }).end(shapes[path]);
    if (path === "/docs/bomb") return res.writeHead(200, { ...html, "content-encoding": "gzip" }).end(bomb);
    // the map's site: /big/sitemap.xml is an index of an oversized sitemap, a Content-Encoding bomb and an honest one
    const xml = { "content-type": "application/xml" };
    if (path === "/big/") return res.writeHead(200, html).end(page("Big", ["/docs/gzip"]));
    if (path === "/big/sitemap.xml") {
      const children = ["/big/huge.xml", "/big/encoded.xml", "/big/ok.xml"].map((p) => `<sitemap><loc>${origin}${p}</loc></sitemap>`).join("");
      return res.writeHead(200, xml).end(`<?xml version="1.0"?><sitemapindex>${children}</sitemapindex>`);
    }
    if (path === "/big/huge.xml") return res.writeHead(200, xml).end(hugeSitemap);
    if (path === "/big/encoded.xml") return res.writeHead(200, { ...xml, "content-encoding": "gzip" }).end(bomb);
    if (path === "/big/ok.xml") return res.writeHead(200, xml).end(urlset([`${origin}/big/a`, `${origin}/big/b`]));
    res.writeHead(404, html).end(page("Not found", []));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  beforeAll(async () => {
    trawl = await startTrawl({ mode });
  });
  afterAll(async () => trawl?.stop());

  it("skips a 1 GiB gzip sitemap with a warning and fails a gzip-bomb page, with bounded memory", async () => {
    expect(bomb.length).toBeLessThan(1_200_000);
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    let maxLagMs = 0;
    let last = performance.now();
    const sampler = setInterval(() => {
      const now = performance.now();
      maxLagMs = Math.max(maxLagMs, now - last - 10);
      last = now;
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    let seen: any[];
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${origin}/docs/`, limit: 10 });
    expect(res.status).toBe(200);
    const id: string = res.body.id;
    try {
      seen = await waitForEnd(trawl.api, id, 90_000);
    } finally {
      clearInterval(sampler);
    }
    const growthMb = (peak - rss0) / 1e6;
    console.log(`${mode}: RSS growth ${growthMb.toFixed(0)} MB, longest event-loop stall ${maxLagMs.toFixed(0)} ms`);
    expect(growthMb).toBeLessThan(300);

    const end = seen.at(-1);
    expect(end.status).toBe("completed");
    expect(end.warning).toMatch(/sitemap\(s\) were skipped/);
    const { body } = await getJson(`${trawl.api}/v2/crawl/${id}?limit=100`);
    const titles = body.data.map((d: any) => d.metadata.title).sort();
    expect(titles).toEqual(["Brotli", "Deflated", "Gzipped", "Home"]);
    expect(body.data.find((d: any) => d.metadata.title === "Gzipped").markdown).toContain("Text of Gzipped.");
    const errors = await getJson(`${trawl.api}/v2/crawl/${id}/errors`);
    const failures = errors.body.errors.map((e: any) => `${e.code} ${e.url}`).sort();
    const refused = ["/docs/bomb", "/docs/bomb.pdf", ...Object.keys(shapes)].map((p) => `SCRAPE_TOO_LARGE ${origin}${p}`);
    expect(failures).toEqual([...refused, `SITEMAP_TOO_LARGE ${origin}/sitemap-bomb.xml.gz`].sort());
  });

  it("/v2/map answers the links it could get and a warning naming each skipped sitemap and why", async () => {
    expect(Buffer.byteLength(hugeSitemap)).toBeGreaterThan(trawl.config.fetchMaxBytes);
    const res = await postJson(`${trawl.api}/v2/map`, { url: `${origin}/big/` });
    expect(res.status).toBe(200);
    const urls = (res.body.links as { url: string }[]).map((l) => l.url).sort();
    expect(urls).toEqual([`${origin}/big/`, `${origin}/big/a`, `${origin}/big/b`, `${origin}/docs/gzip`]);
    expect(res.body.warning).toBe(
      "3 sitemap(s) were skipped because they are larger than this server accepts (SITEMAP_MAX_BYTES once a gzipped file is inflated, FETCH_MAX_BYTES for a response); " +
      `the URLs they list are not in this map: ${origin}/sitemap-bomb.xml.gz (sitemap skipped: inflated size larger than 52428800 bytes), ` +
      `${origin}/big/huge.xml (sitemap skipped: response larger than 10485760 bytes), ` +
      `${origin}/big/encoded.xml (sitemap skipped: response larger than 10485760 bytes once decompressed).`,
    );
  });
});
