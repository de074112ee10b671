import { afterAll, describe, expect, it } from "vitest";
import { makePdf } from "../../test/fixtures/pdf.ts";
import { ConvertFailedError, ConvertPool, ConvertTimeoutError, OUT_OF_MEMORY } from "./worker-pool.ts";

const options = { limit: 1, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown" as const], onlyMainContent: true };
const page = (body: string, extra: object = {}) => ({ url: "https://s.test/a", finalUrl: "https://s.test/a", statusCode: 200, contentType: "text/html", body, scrapeId: "x", ...extra });

describe("ConvertPool", () => {
  // a generous limit: the first PDF loads pdfjs in the worker (over 2 s seen on a loaded machine); the time limit itself
  // is tested with pools of their own below
  const pool = new ConvertPool({ size: 2, timeoutMs: 20_000 });
  afterAll(() => pool.close());

  it("converts pages in worker threads, PDFs included", async () => {
    const [a, b] = await Promise.all([pool.convert(page("<h1>One</h1>"), options), pool.convert(page("<p>Two</p>"), options)]);
    expect(a.document.markdown).toBe("# One");
    expect(b.document.markdown).toBe("Two");
    const pdf = await pool.convert(page("", { contentType: "application/pdf", bytes: new Uint8Array(makePdf(["Page one"])) }), options);
    expect(pdf.document.markdown).toBe("Page one");
    expect(pdf.credits).toBe(1);
  }, 30_000); // two fresh workers load their modules first: over 5 s during a full unit run on a busy machine

  it("abandons a conversion past its time limit and keeps serving", async () => {
    const fast = new ConvertPool({ size: 1, timeoutMs: 30 });
    try {
      // a huge, deeply nested page: far more than 30 ms of work
      const heavy = "<div>".repeat(20000) + "x".repeat(10) + "</div>".repeat(20000) + "<p>text</p>".repeat(50000);
      await expect(fast.convert(page(heavy), options)).rejects.toThrow(ConvertTimeoutError);
    } finally {
      await fast.close();
    }
    const after = await pool.convert(page("<p>still here</p>"), options);
    expect(after.document.markdown).toBe("still here");
  });

  it("pages posted ahead of a worker's current one each get their own result; a page behind one that timed out is converted by the replacement", async () => {
    const many = await Promise.all(Array.from({ length: 40 }, (_, i) => pool.convert(page(`<h2>Page ${i}</h2>`), options)));
    expect(many.map((c) => c.document.markdown)).toEqual(Array.from({ length: 40 }, (_, i) => `## Page ${i}`));
    const one = new ConvertPool({ size: 1, timeoutMs: 300 });
    try {
      await one.convert(page("<p>warm</p>"), options); // the worker has loaded its modules: the limit counts conversion only
      const heavy = "<div>".repeat(20000) + "x".repeat(10) + "</div>".repeat(20000) + "<p>text</p>".repeat(1_000_000); // seconds of work
      const slow = one.convert(page(heavy), options);
      const behind = one.convert(page("<p>behind</p>"), options); // posted to the same worker, after the slow page
      await expect(slow).rejects.toThrow(ConvertTimeoutError);
      expect((await behind).document.markdown).toBe("behind");
    } finally {
      await one.close();
    }
  }, 30_000);

  it("close settles every page: the ones queued, the one a worker converts and the one posted behind it", async () => {
    const closing = new ConvertPool({ size: 1, timeoutMs: 60_000 });
    await closing.convert(page("<p>warm</p>"), options);
    const heavy = "<div>".repeat(20000) + "x".repeat(10) + "</div>".repeat(20000) + "<p>text</p>".repeat(1_000_000);
    const pages = [closing.convert(page(heavy), options), closing.convert(page("<p>behind</p>"), options), closing.convert(page("<p>queued</p>"), options)];
    const settled = Promise.allSettled(pages); // handled before close rejects them
    await new Promise((r) => setTimeout(r, 100)); // the worker is on the heavy page
    await closing.close();
    expect((await settled).map((s) => s.status)).toEqual(["rejected", "rejected", "rejected"]);
  }, 30_000);

  it("a lazy pool starts its workers with the first page", async () => {
    const lazy = new ConvertPool({ size: 2, timeoutMs: 20_000, lazy: true });
    try {
      expect(lazy.workers).toBe(0);
      expect((await lazy.convert(page("<h2>Later</h2>"), options)).document.markdown).toBe("## Later");
      expect(lazy.workers).toBe(2);
    } finally {
      await lazy.close();
    }
    expect(pool.workers).toBe(2); // the default starts them at once
  }, 30_000);

  it("a page that needs more heap than a worker has fails with SCRAPE_CONVERT_OUT_OF_MEMORY; the worker is replaced and the page behind it converted", async () => {
    const small = new ConvertPool({ size: 1, timeoutMs: 120_000, heapMb: 64 });
    try {
      await small.convert(page("<p>warm</p>"), options);
      // ~6 MB of small elements: a parsed tree of well over 64 MB (the same page converts with the default heap)
      const heavy = "<main>" + "<div><p>Some text with <b>bold</b> and <a href='/x'>a link</a>.</p></div>".repeat(90_000) + "</main>";
      const big = small.convert(page(heavy), options);
      const behind = small.convert(page("<p>behind</p>"), options); // posted to the same worker, after the heavy page
      const err = await big.then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ConvertFailedError);
      expect((err as ConvertFailedError).code).toBe(OUT_OF_MEMORY);
      expect((err as Error).message).toMatch(/64 MB heap/);
      expect((await behind).document.markdown).toBe("behind");
      expect(small.workers).toBe(1);
    } finally {
      await small.close();
    }
  }, 60_000);

  it("a worker that converted a big input is replaced once idle (V8 would keep the memory it took)", async () => {
    const recycling = new ConvertPool({ size: 1, timeoutMs: 120_000, heapMb: 1024 });
    try {
      await recycling.convert(page("<p>warm</p>"), options);
      expect(recycling.replaced).toBe(0);
      // ~4.5 MB of small elements: past RECYCLE_INPUT_BYTES (4 MiB)
      const big = "<main>" + "<div><p>Some text with <b>bold</b> and <a href='/x'>a link</a>.</p></div>".repeat(65_000) + "</main>";
      expect((await recycling.convert(page(big), options)).document.markdown).toContain("Some text with **bold**");
      expect(recycling.replaced).toBe(1);
      expect((await recycling.convert(page("<p>next</p>"), options)).document.markdown).toBe("next");
      expect(recycling.replaced).toBe(1); // a small page: the worker stays
    } finally {
      await recycling.close();
    }
  }, 60_000);

  it("reports a page that cannot be converted", async () => {
    await expect(pool.convert(page("", { contentType: "application/pdf", bytes: new Uint8Array([1, 2, 3]) }), options)).rejects.toThrow(ConvertFailedError);
  });
});
