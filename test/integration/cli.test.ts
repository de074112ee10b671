// The newcomer's commands, run as processes: `npm start` with no infrastructure at all, and `trawl crawl`.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startScriptSite } from "../fixtures/script-site.ts";
import { allChunks, postJson, waitForEnd } from "./harness.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const NODE = join(ROOT, "node_modules", ".bin", "node");

let site: FixtureSite;
const tmp = mkdtempSync(join(tmpdir(), "trawl-cli-"));
beforeAll(async () => {
  site = await startFixtureSite({ delayMs: 2 });
});
afterAll(async () => {
  await site.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** No Kafka, no ClickHouse: both point at a closed port, so using either would fail. */
const noInfra = { KAFKA_BROKERS: "127.0.0.1:1", CLICKHOUSE_URL: "http://127.0.0.1:1", ALLOW_PRIVATE_CRAWL_TARGETS: "true", LOG_LEVEL: "warn", MAX_CPU: "1", MAX_RAM: "1" };

function run(cmd: string, args: string[], env: Record<string, string>): { child: ChildProcess; exit: Promise<number>; output: () => string } {
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const exit = new Promise<number>((resolve) => child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : -1))));
  return { child, exit, output: () => out };
}

describe("npm start", () => {
  it("serves the API on the embedded default with nothing else running", async () => {
    const port = await freePort();
    const dataDir = join(tmp, "start-data");
    const t0 = Date.now();
    const proc = run("npm", ["start"], { ...noInfra, LOG_LEVEL: "info", PORT: String(port), DATA_DIR: dataDir });
    const api = `http://127.0.0.1:${port}`;
    try {
      for (;;) {
        const ready = await fetch(`${api}/ready`).then((r) => r.status === 200, () => false);
        if (ready) break;
        if (Date.now() - t0 > 60_000) throw new Error(`not ready after 60 s:\n${proc.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      console.log(`npm start -> ready in ${Date.now() - t0} ms`);
      expect(proc.output()).toContain("authentication is bypassed");
      const res = await postJson(`${api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000 });
      expect(res.status).toBe(200);
      const last = (await waitForEnd(api, res.body.id)).at(-1);
      expect(last).toMatchObject({ status: "completed", completed: expectedDocPaths().length });
      const docs = (await allChunks(api, res.body.id)).flatMap((c) => c.body.data);
      expect(docs).toHaveLength(expectedDocPaths().length);
      expect(existsSync(join(dataDir, "store", "documents", "000001.jsonl"))).toBe(true);
    } finally {
      process.kill(-(proc.child.pid as number), "SIGINT"); // Ctrl-C in a terminal: the whole foreground group
    }
    await proc.exit;
    // Trawl drained and stopped (npm's own exit code for a signal is npm's business)
    expect(proc.output()).toContain('"msg":"shutting down: draining in-flight work"');
    expect(proc.output()).toContain('"msg":"stopped"');
  });
});

describe("trawl keys with npm start", () => {
  it("a key made by the default command is accepted by an embedded Trawl on its default DATA_DIR, made before it started or while it runs", async () => {
    // a newcomer's checkout: both commands run in one directory, with no TRAWL_MODE and no DATA_DIR set
    const home = mkdtempSync(join(tmp, "keys-"));
    const env: Record<string, string | undefined> = { ...process.env, ...noInfra, USE_DB_AUTHENTICATION: "true", AUTH_CACHE_TTL_MS: "200", LOG_LEVEL: "info" };
    delete env.TRAWL_MODE;
    delete env.DATA_DIR;
    const trawl = (args: string[]) => {
      const child = spawn(NODE, [join(ROOT, "bin", "trawl.js"), ...args], { cwd: home, env, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      const exit = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? -1)));
      return { child, exit, out: () => out, err: () => err };
    };
    const createKey = async (team: string) => {
      const created = trawl(["keys", "create", "--team", team]);
      expect(await created.exit, created.err()).toBe(0);
      expect(created.err()).toContain(`DATA_DIR=${join(home, ".trawl-data")} (embedded mode: the default, as npm start; --cluster or TRAWL_MODE=cluster: ClickHouse)`);
      return created.out().trim();
    };
    const before = await createKey("before-start");
    const port = await freePort();
    env.PORT = String(port);
    const server = trawl(["all", "--embedded"]); // what npm start runs
    const api = `http://127.0.0.1:${port}`;
    const status = (key?: string) => fetch(`${api}/v2/crawl/active`, key ? { headers: { authorization: `Bearer ${key}` } } : {}).then((r) => r.status);
    try {
      for (let i = 0; (await fetch(`${api}/ready`).then((r) => r.status, () => 0)) !== 200; i++) {
        if (i > 600 || server.child.exitCode !== null) throw new Error(`not ready:\n${server.out()}${server.err()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const during = await createKey("while-running");
      expect(await status()).toBe(401);
      expect(await status(before)).toBe(200);
      expect(await status(during)).toBe(200);
      // the directory the key command made is new, not an old one to upgrade
      expect(server.out() + server.err()).not.toContain("upgraded");
    } finally {
      server.child.kill("SIGTERM");
      await server.exit;
    }
  });
});

describe("trawl crawl", () => {
  it("writes one file per page and format and an index, and exits 0", async () => {
    const out = join(tmp, "out-ok");
    const proc = run(NODE, ["bin/trawl.js", "crawl", `${site.origin}/docs/`, "--out", out, "--format", "markdown", "--format", "html", "--limit", "1000"], noInfra);
    expect(await proc.exit, proc.output()).toBe(0);
    const index = readFileSync(join(out, "index.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(index.map((e) => new URL(e.metadata.sourceURL).pathname).sort()).toEqual(expectedDocPaths().sort());
    const files = readdirSync(join(out, "pages"));
    expect(files.filter((f) => f.endsWith(".md"))).toHaveLength(expectedDocPaths().length);
    expect(files.filter((f) => f.endsWith(".html"))).toHaveLength(expectedDocPaths().length);
    const entry = index.find((e) => e.metadata.sourceURL.endsWith("/docs/section-3/page-7.html"));
    expect(readFileSync(join(out, entry.files.markdown), "utf8")).toContain("Content of page 7 in section 3.");
    expect(proc.output()).toMatch(/completed: 69 pages written/);
    expect(proc.output()).toMatch(/69 done \/ 70 found \/ 1 failed/); // plain progress lines when not a TTY
  });

  it("exits non-zero when the crawl fails, and 2 on bad usage", async () => {
    const failed = run(NODE, ["bin/trawl.js", "crawl", `${site.origin}/docs/missing`, "--out", join(tmp, "out-failed")], noInfra);
    expect(await failed.exit).toBe(1);
    expect(failed.output()).toContain("failed: 0 pages written");
    const usage = run(NODE, ["bin/trawl.js", "crawl", `${site.origin}/docs/`, "--limit", "zero"], noInfra);
    expect(await usage.exit).toBe(2);
    expect(usage.output()).toContain("--limit must be a positive integer");
  });

  it("stops cleanly on Ctrl-C and keeps what was written", async () => {
    const slow = await startFixtureSite({ delayMs: 700 });
    const out = join(tmp, "out-interrupted");
    try {
      const proc = run(NODE, ["bin/trawl.js", "crawl", `${slow.origin}/docs/`, "--out", out], { ...noInfra, FETCH_CONCURRENCY: "2" });
      for (let i = 0; i < 300 && !/[1-9]\d* done/.test(proc.output()); i++) await new Promise((r) => setTimeout(r, 100));
      process.kill(proc.child.pid as number, "SIGINT");
      expect(await proc.exit).toBe(130);
      const lines = readFileSync(join(out, "index.jsonl"), "utf8").trim().split("\n").filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.length).toBeLessThan(expectedDocPaths().length);
      expect(readdirSync(join(out, "pages"))).toHaveLength(lines.length);
      expect(proc.output()).toContain("cancelled:");
    } finally {
      await slow.close();
    }
  });
});

describe("trawl scrape", () => {
  it("prints one document", async () => {
    const proc = run(NODE, ["bin/trawl.js", "scrape", `${site.origin}/docs/about`], noInfra);
    expect(await proc.exit).toBe(0);
    const doc = JSON.parse(proc.output().slice(proc.output().indexOf("{")));
    expect(doc.metadata).toMatchObject({ title: "About", statusCode: 200 });
    expect(doc.markdown).toContain("About these docs.");
  });
});

describe("trawl scrape renders when the page needs it (RENDER, Chromium present)", () => {
  const docOf = (out: string) => JSON.parse(out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1));

  it("a script-built page through Chromium under RENDER=auto, statically under RENDER=never; --wait-for and screenshots", async () => {
    const scripts = await startScriptSite();
    try {
      const auto = run(NODE, ["bin/trawl.js", "scrape", `${scripts.origin}/after-load`], noInfra);
      expect(await auto.exit, auto.output()).toBe(0);
      const rendered = docOf(auto.output());
      expect(rendered.metadata.engine).toBe("chromium");
      expect(rendered.markdown).toContain("Built by script");

      const never = run(NODE, ["bin/trawl.js", "scrape", `${scripts.origin}/after-load`], { ...noInfra, RENDER: "never" });
      expect(await never.exit, never.output()).toBe(0);
      const plain = docOf(never.output());
      expect(plain.metadata.engine).toBe("fetch");
      expect(plain.markdown ?? "").not.toContain("Built by script");

      const waited = run(NODE, ["bin/trawl.js", "scrape", `${scripts.origin}/after-delay`, "--wait-for", "1500", "--format", "markdown", "--format", "screenshot"], noInfra);
      expect(await waited.exit, waited.output()).toBe(0);
      const delayed = docOf(waited.output());
      expect(delayed.markdown).toContain("DELAYED CONTENT");
      expect(delayed.screenshot).toMatch(/^data:image\/png;base64,/);

      // a static page stays static under auto: no browser needed
      const stat = run(NODE, ["bin/trawl.js", "scrape", `${scripts.origin}/static`], noInfra);
      expect(await stat.exit, stat.output()).toBe(0);
      expect(docOf(stat.output()).metadata.engine).toBe("fetch");
    } finally {
      await scripts.close();
    }
  });

  it("without Chromium, a request that needs a browser fails clearly and a script-built page keeps its static HTML with a warning", async () => {
    const scripts = await startScriptSite();
    try {
      const env = { ...noInfra, CHROMIUM_PATH: "/nonexistent/chromium" };
      const refused = run(NODE, ["bin/trawl.js", "scrape", `${scripts.origin}/after-load`, "--wait-for", "100"], env);
      expect(await refused.exit).toBe(1);
      expect(refused.output()).toContain("needs a browser");
      const fallback = run(NODE, ["bin/trawl.js", "scrape", `${scripts.origin}/after-load`], env);
      expect(await fallback.exit, fallback.output()).toBe(0);
      expect(fallback.output()).toContain("warning: This page looks built by scripts");
      const bad = run(NODE, ["bin/trawl.js", "scrape", `${scripts.origin}/after-load`, "--wait-for", "soon"], env);
      expect(await bad.exit).toBe(2);
    } finally {
      await scripts.close();
    }
  });
});
