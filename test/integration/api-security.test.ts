// Cross-site requests and hostile bodies, in both modes: bodies must be application/json (415), no CORS headers
// unless CORS_ALLOWED_ORIGINS says so, deep JSON and CR/LF in headers are 400s. Then Trawl as a process: the admin
// key is never logged, and a weak one stops a start on a public address.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { getJson, MODES, postJson, startTrawl, type Instance } from "./harness.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const NODE = join(ROOT, "node_modules", ".bin", "node");
const EVIL = "https://evil.example";

const post = (url: string, body: string, contentType?: string) =>
  fetch(url, { method: "POST", headers: { ...(contentType ? { "content-type": contentType } : {}), origin: EVIL }, body });

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startFixtureSite(), startTrawl({ mode })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("answers 415 UNSUPPORTED_MEDIA_TYPE to bodies that are not application/json, and starts nothing", async () => {
    const body = JSON.stringify({ url: `${site.origin}/docs/`, limit: 1 });
    for (const type of ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", undefined]) {
      for (const path of ["/v2/crawl", "/v2/scrape"]) {
        const res = await post(`${trawl.api}${path}`, body, type);
        expect(res.status, `${path} ${type}`).toBe(415);
        const json = (await res.json()) as { error?: unknown };
        expect(json).toMatchObject({ success: false, code: "UNSUPPORTED_MEDIA_TYPE" });
        expect(typeof json.error).toBe("string");
      }
    }
    expect((await getJson(`${trawl.api}/v2/crawl/active`)).body.crawls).toEqual([]);
    expect(site.hits.size).toBe(0);
    const ok = await post(`${trawl.api}/v2/crawl`, body, "application/json; charset=utf-8");
    expect(ok.status).toBe(200);
  });

  it("sends no CORS headers by default, to requests or preflights", async () => {
    const get = await fetch(`${trawl.api}/v2/crawl/active`, { headers: { origin: EVIL } });
    expect(get.status).toBe(200);
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
    const pre = await fetch(`${trawl.api}/v2/crawl`, { method: "OPTIONS", headers: { origin: EVIL, "access-control-request-method": "POST", "access-control-request-headers": "content-type" } });
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.headers.get("access-control-allow-methods")).toBeNull();
  });

  it("answers 400, not 500, to JSON nested 5,000 levels deep", async () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    for (const path of ["/v2/crawl", "/v2/scrape"]) {
      for (const text of [deep(5000), `{"url":"${site.origin}/docs/","webhook":{"url":"https://hooks.example.com/","metadata":{"a":${deep(5000)}}}}`, `{"url":"${site.origin}/docs/","x":${deep(5000)}}`]) {
        const res = await postJson(`${trawl.api}${path}`, text);
        expect(res.status, `${path} ${text.slice(0, 60)}`).toBe(400);
        expect(res.body.success).toBe(false);
      }
    }
  });

  it("answers 400 to CR/LF in header names or values", async () => {
    for (const headers of [{ "X-A": "v\r\nX-Injected: 1" }, { "X-A\r\nX-Injected": "1" }, { "X-A": "v\n" }]) {
      const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, scrapeOptions: { headers } });
      expect(crawl.status).toBe(400);
      expect(crawl.body.details[0].path.slice(0, 2)).toEqual(["scrapeOptions", "headers"]);
      const scrape = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/docs/`, headers });
      expect(scrape.status).toBe(400);
    }
  });
});

describe("CORS_ALLOWED_ORIGINS", () => {
  let trawl: Instance;
  beforeAll(async () => {
    trawl = await startTrawl({ mode: "embedded", corsAllowedOrigins: "https://app.example, http://localhost:5173" });
  });
  afterAll(async () => trawl?.stop());

  it("answers the listed origins only, preflights included", async () => {
    const ok = await fetch(`${trawl.api}/v2/crawl/active`, { headers: { origin: "https://app.example" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(ok.headers.get("vary")).toMatch(/Origin/);
    const pre = await fetch(`${trawl.api}/v2/crawl`, { method: "OPTIONS", headers: { origin: "http://localhost:5173", "access-control-request-method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    const other = await fetch(`${trawl.api}/v2/crawl/active`, { headers: { origin: EVIL } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function run(env: Record<string, string>) {
  const child = spawn(NODE, ["bin/trawl.js", "all", "--embedded"], { cwd: ROOT, env: { ...process.env, MAX_CPU: "1", MAX_RAM: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exit = new Promise<number>((resolve) => child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : -1))));
  return { child, exit, output: () => out };
}

describe("the admin key (BULL_AUTH_KEY), Trawl as a process", () => {
  const tmp = mkdtempSync(join(tmpdir(), "trawl-sec-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("is never logged, even at LOG_LEVEL=trace with admin requests and failures", async () => {
    const key = "Zq8-Lm3_Wx7pTn4Rv9Ks";
    const port = await freePort();
    const proc = run({ LOG_LEVEL: "trace", BULL_AUTH_KEY: key, PORT: String(port), DATA_DIR: join(tmp, "a") });
    const api = `http://127.0.0.1:${port}`;
    try {
      const t0 = Date.now();
      while (!(await fetch(`${api}/ready`).then((r) => r.ok, () => false))) {
        if (Date.now() - t0 > 60_000) throw new Error(`not ready:\n${proc.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await fetch(`${api}/admin/${key}/queues.json`)).status).toBe(200);
      expect((await fetch(`${api}/admin/${key}/queues`)).status).toBe(200);
      expect((await fetch(`${api}/admin/${key}/nothing-here`)).status).toBe(404);
      await fetch(`${api}/admin/${key}/queues`, { method: "POST", body: "x", headers: { "content-type": "text/plain" } });
    } finally {
      proc.child.kill("SIGTERM");
      await proc.exit;
    }
    expect(proc.output()).not.toContain(key);
    expect(proc.output()).toContain("/admin/[redacted]/queues");
  });

  it("stops a start on a public HOST when weak, naming the variable and not the key", async () => {
    for (const key of ["CHANGEME", "hunter2hunter2"]) {
      const proc = run({ HOST: "0.0.0.0", PORT: String(await freePort()), BULL_AUTH_KEY: key, DATA_DIR: join(tmp, "b") });
      const code = await proc.exit;
      expect(code, proc.output()).not.toBe(0);
      expect(proc.output()).toContain("BULL_AUTH_KEY is too weak while HOST=0.0.0.0");
      expect(proc.output()).not.toContain(key);
    }
  });
});
