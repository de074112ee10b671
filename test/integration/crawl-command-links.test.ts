// `trawl crawl` (in this process) through a site with links whose percent-encoding is invalid: the crawl completes,
// every page is written, and the bad ones get a file too.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crawlCommand } from "../../app/commands/crawl-command.ts";

const BAD = ["/docs/a%E0%A4%A.html", "/docs/%zz", "/docs/%C3%28"];
let server: Server;
let origin = "";
const tmp = mkdtempSync(join(tmpdir(), "trawl-badlinks-"));

beforeAll(async () => {
  server = createServer((req, res) => {
    const html = (title: string, links: string[]) =>
      `<html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>Body of ${title}.</p>${links.map((l) => `<a href="${l}">x</a>`).join("")}</main></body></html>`;
    res.writeHead(200, { "content-type": "text/html" });
    res.end(req.url === "/docs/" ? html("Home", BAD) : html(`Page ${req.url}`, []));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(tmp, { recursive: true, force: true });
});

describe("trawl crawl", () => {
  it("does not abort on links with invalid percent-encoding", async () => {
    const out = join(tmp, "out");
    const code = await crawlCommand([`${origin}/docs/`, "--out", out, "--limit", "10"], { ALLOW_PRIVATE_CRAWL_TARGETS: "true", LOG_LEVEL: "error", MAX_CPU: "1", MAX_RAM: "1" });
    expect(code).toBe(0);
    const index = readFileSync(join(out, "index.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(index).toHaveLength(4);
    expect(index.map((e) => new URL(e.metadata.url).pathname).sort()).toEqual(["/docs/", ...BAD].sort());
  });
});
