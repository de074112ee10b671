// Latency of valid requests while wrong API keys arrive (issue 31, item 6). An embedded Trawl with
// USE_DB_AUTHENTICATION=true runs in a process of its own; this process sends `GET /v2/crawl/active` with a valid key
// RATE times a second (each on its own timer, not waiting for the last) for SECONDS, first quietly, then while a flood
// of wrong keys arrives WRONG times a second, and prints p50/p99/max of the valid requests in each phase and what the
// flood was answered. Each wrong key has the valid key's id and a random secret (the case that cost a hash before).
//   node bench/auth-flood.ts [one|many] [seconds] [wrong per s] [valid per s] [checkout]
// one: the flood comes from 127.0.0.1, the valid client's address too (the failed-key limit answers it);
// many: each wrong key from another of 127.0.0.2-254 (no address reaches the limit: the cost of the hash itself).
// checkout: another checkout (with node_modules) whose bin/trawl.js is measured instead, e.g. the commit before.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";

const [source = "one", secondsArg = "20", wrongArg = "25", validArg = "20", checkout] = process.argv.slice(2);
if (source !== "one" && source !== "many") throw new Error("usage: node bench/auth-flood.ts [one|many] [seconds] [wrong per s] [valid per s] [checkout]");
const SECONDS = Number(secondsArg);
const WRONG_PER_S = Number(wrongArg);
const VALID_PER_S = Number(validArg);
const ROOT = resolve(checkout ?? join(import.meta.dirname, ".."));

const port = await new Promise<number>((done) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => done(p));
  });
});
const dataDir = mkdtempSync(join(tmpdir(), "trawl-auth-flood-"));
const env = { ...process.env, TRAWL_MODE: "embedded", DATA_DIR: dataDir, PORT: String(port), USE_DB_AUTHENTICATION: "true", LOG_LEVEL: "warn" };
const child = spawn(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/trawl.js"), "all", "--embedded"], { env, stdio: ["ignore", "ignore", "inherit"] });

interface Answer { status: number; ms: number; retryAfter?: string }
const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });
function call(path: string, method: string, headers: Record<string, string>, opts: { body?: string; localAddress?: string } = {}): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((done) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers, ...(opts.localAddress ? { localAddress: opts.localAddress, agent: false } : { agent: keepAlive }) }, (res) => {
      res.resume();
      res.on("end", () => done({ status: res.statusCode ?? 0, ms: performance.now() - t0, ...(res.headers["retry-after"] ? { retryAfter: String(res.headers["retry-after"]) } : {}) }));
    });
    req.on("error", () => done({ status: 0, ms: performance.now() - t0 }));
    req.end(opts.body);
  });
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const figures = (answers: Answer[]) => {
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  return { requests: ms.length, p50Ms: +quantile(ms, 0.5).toFixed(1), p99Ms: +quantile(ms, 0.99).toFixed(1), maxMs: +(ms.at(-1) ?? NaN).toFixed(1), notOk: answers.filter((a) => a.status !== 200).length };
};

/** Runs `send` `perSecond` times a second for `seconds`, each on its own timer; resolves with every answer. */
async function steady(perSecond: number, send: (i: number) => Promise<Answer>, seconds = SECONDS): Promise<Answer[]> {
  const pending: Promise<Answer>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < seconds * perSecond; i++) {
    const due = t0 + (i * 1000) / perSecond;
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    pending.push(send(i));
  }
  return Promise.all(pending);
}

try {
  for (;;) {
    if ((await call("/ready", "GET", {})).status === 200) break;
    if (child.exitCode !== null) throw new Error(`trawl exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const created = await new Promise<string>((done, fail) => {
    const req = request({ host: "127.0.0.1", port, path: "/admin/CHANGEME/keys", method: "POST", headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => done((JSON.parse(text) as { key: string }).key));
    });
    req.on("error", fail);
    req.end(JSON.stringify({ team: "bench" }));
  });
  const valid = () => call("/v2/crawl/active", "GET", { authorization: `Bearer ${created}` });
  await steady(VALID_PER_S, valid, 3); // warm-up (JIT, the key's first verification)
  const quiet = figures(await steady(VALID_PER_S, valid));
  const floodAnswers: Answer[] = [];
  const wrong = (i: number) => {
    const key = `${created.slice(0, 11)}${randomBytes(16).toString("hex")}`;
    const localAddress = source === "many" ? `127.0.0.${2 + (i % 253)}` : "127.0.0.1";
    return call("/v2/crawl/active", "GET", { authorization: `Bearer ${key}` }, { localAddress }).then((a) => (floodAnswers.push(a), a));
  };
  const [during] = await Promise.all([steady(VALID_PER_S, valid), steady(WRONG_PER_S, wrong)]);
  const statuses: Record<string, number> = {};
  for (const a of floodAnswers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const wrongMs = floodAnswers.filter((a) => a.status === 401).map((a) => a.ms).sort((a, b) => a - b);
  console.log(JSON.stringify({
    checkout: ROOT, source, seconds: SECONDS, wrongPerSecond: WRONG_PER_S, validPerSecond: VALID_PER_S,
    validQuiet: quiet, validDuringFlood: figures(during),
    flood: { statuses, retryAfter: [...new Set(floodAnswers.map((a) => a.retryAfter).filter(Boolean))].slice(0, 5), answered401P50Ms: +quantile(wrongMs, 0.5).toFixed(1) },
  }));
} finally {
  keepAlive.destroy();
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  rmSync(dataDir, { recursive: true, force: true });
}
