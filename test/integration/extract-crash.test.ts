// POST /v2/extract survives kill -9 of the process that runs the job, in both modes. The job names two pages and a path
// crawl; one page and the crawl's second page are held by the site, so when the job's owner is killed one page is
// done (stored as a step), one page is in flight and the crawl is running. Embedded: `trawl all --embedded` is killed
// and started again on the same DATA_DIR. Cluster: two `trawl all` processes share the topics and groups; the one that
// runs the job is killed and the other takes its partitions over. Either way the job must end `completed` with the
// hand-written merged data, the finished page not fetched again, one crawl only (no second submit), and that crawl's
// credits counted once per page. Second case: both pages fetched and waiting for the model when the owner is killed;
// the resumed job converts the pages it kept and asks the model again, but does not fetch them again.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { jobCrawlId } from "../../pipeline/usecases/extract-run.ts";
import { startChatServer, type ChatServer } from "../fixtures/chat-server.ts";
import { freePort } from "./own-infra.ts";
import { allChunks, getJson, MODES, postJson } from "./harness.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const fixture = (name: string) => readFileSync(join(ROOT, "test", "fixtures", "extract", name), "utf8");

/** The site: pages by path, hits counted, some held until release(). */
async function startSite(held: string[]) {
  const pages: Record<string, string> = {
    "/shop/trail-runner": fixture("product-jsonld.html"),
    "/blog/kafka": fixture("article-jsonld.html"),
    "/events/": `<!doctype html><html><head><title>Events</title></head><body><main><p>What is on this month.</p><a href="/events/library">Library</a></main></body></html>`,
    "/events/library": fixture("microdata-events.html"),
  };
  const hits = new Map<string, number>();
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] as string;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const answer = () => {
      const body = pages[path];
      if (body === undefined) res.writeHead(404, { "content-type": "text/html" }).end("<p>Not found</p>");
      else res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
    };
    if (held.includes(path)) void released.then(answer);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: (path: string) => hits.get(path) ?? 0,
    release,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

interface Proc { child: ChildProcess; output: () => string; api: string }

async function launch(args: string[], env: Record<string, string>): Promise<Proc> {
  const port = await freePort();
  const child = spawn(join(ROOT, "node_modules", ".bin", "node"), ["bin/trawl.js", ...args], {
    cwd: ROOT, stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env, PORT: String(port), ALLOW_PRIVATE_CRAWL_TARGETS: "true", LOG_LEVEL: "info", MAX_CPU: "1", MAX_RAM: "1", RENDER: "never", FETCH_RETRIES: "1" },
  });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const api = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 1200; i++) {
    if (await fetch(`${api}/ready`).then((r) => r.ok, () => false)) return { child, output: () => out, api };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`trawl did not start:\n${out.slice(-3000)}`);
}

const kill9 = (p: Proc) => new Promise<void>((resolve) => {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve();
  p.child.once("exit", () => resolve());
  p.child.kill("SIGKILL");
});

async function until(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>, logs: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The extract job once it left `processing`. */
async function finished(api: string, id: string, logs: () => string): Promise<any> {
  let job: any;
  await until("the job to complete", 120_000, async () => {
    job = (await getJson(`${api}/v2/extract/${id}`)).body;
    return job.status !== "processing";
  }, logs);
  return job;
}

const lines = (out: string, ...texts: string[]) => out.split("\n").filter((l) => texts.every((t) => l.includes(t)));

const schema = {
  type: "object",
  properties: {
    price: { type: "number" }, currency: { type: "string" }, sku: { type: "string" }, wordCount: { type: "integer" },
    contact: { type: "string" }, openingHours: { type: "string" },
  },
};
// written by hand from the pages: the product (price, currency, sku), the article (wordCount), the events page
const expected = {
  price: 129.9, currency: "EUR", sku: "TR3-42", wordCount: 1830,
  contact: "events@library.example", openingHours: "Mon–Sat 9:00–18:00",
};

/** Starts one `trawl all`: embedded on `dataDir`, or cluster on topics, groups and a database of its own (`tag`). */
function starter(mode: (typeof MODES)[number], dataDir: string, env: Record<string, string> = {}): () => Promise<Proc> {
  const tag = `x${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  return () => mode === "embedded"
    ? launch(["all", "--embedded"], { ...env, DATA_DIR: dataDir })
    : launch(["all"], {
      ...env, TRAWL_MODE: "cluster", KAFKA_TOPIC_PREFIX: `${tag}.`, KAFKA_GROUP_PREFIX: `${tag}.`, CLICKHOUSE_DATABASE: `trawl_${tag}`,
      KAFKA_PARTITIONS: "4", KAFKA_SESSION_TIMEOUT_MS: "6000", SCHEMA_REGISTRY_URL: "",
    });
}

describe.each(MODES)("%s mode: kill -9 of the process running an extract job", (mode) => {
  const procs: Proc[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-extract-crash-"));
  let site: Awaited<ReturnType<typeof startSite>> | undefined;
  afterAll(async () => {
    await Promise.all(procs.map(kill9));
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("another process resumes the job: right data, finished work not redone, one crawl charged once", async () => {
    site = await startSite(["/blog/kafka", "/events/library"]);
    const start = starter(mode, dataDir);
    // cluster: two replicas of every role (the second starts once the first created the topics and the database)
    procs.push(await start());
    if (mode === "cluster") procs.push(await start());
    const logs = () => procs.map((p, i) => `--- process ${i}\n${p.output().slice(-3000)}`).join("\n");
    const all = () => procs.map((p) => p.output()).join("\n");

    const urls = [`${site.origin}/shop/trail-runner`, `${site.origin}/blog/kafka`, `${site.origin}/events/*`];
    const submitted = await postJson(`${procs[0]?.api}/v2/extract`, { urls, schema });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const id = submitted.body.id as string;

    // mid-job: the first page stored as a step, the second page in flight, the crawl waiting for its second page
    await until("the job to be mid-way", 90_000, () =>
      lines(all(), id, "extract step done", '"step":"page-0"').length === 1 && site!.hits("/blog/kafka") >= 1 && site!.hits("/events/library") >= 1, logs);
    const owner = procs.find((p) => lines(p.output(), id, "extract step done").length > 0) as Proc;
    await kill9(owner);
    const survivors = procs.filter((p) => p !== owner);
    if (mode === "embedded") procs.push(await start());
    const api = (mode === "embedded" ? procs.at(-1) : survivors[0])?.api as string;
    site.release();

    const job = await finished(api, id, logs);
    expect(job.status, JSON.stringify(job)).toBe("completed");
    expect(job.data).toEqual(expected);
    expect(lines(all(), id, "extract job resumed")).toHaveLength(1);
    // the finished page was not fetched again; the interrupted one was
    expect(site.hits("/shop/trail-runner")).toBe(1);
    expect(site.hits("/blog/kafka")).toBeGreaterThanOrEqual(2);
    // one crawl, submitted once (the resumed job found it by its fixed id), every page of it charged once
    const crawlId = jobCrawlId(id, 0);
    const submits = lines(all(), "crawl submitted");
    expect(submits).toHaveLength(1);
    expect(submits[0]).toContain(crawlId);
    const docs = (await allChunks(api, crawlId)).flatMap((c) => c.body.data);
    const status = (await getJson(`${api}/v2/crawl/${crawlId}?limit=1`)).body;
    expect(status).toMatchObject({ status: "completed", completed: 2 });
    expect(docs.map((d: any) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(["/events/", "/events/library"]);
    expect(status.creditsUsed).toBe(docs.reduce((n: number, d: any) => n + Number(d.metadata.creditsUsed), 0));
  });
});

describe.each(MODES)("%s mode: kill -9 while an extract job's fetched pages wait for the model", (mode) => {
  const procs: Proc[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-extract-crash-"));
  let site: Awaited<ReturnType<typeof startSite>> | undefined;
  let chat: ChatServer | undefined;
  afterAll(async () => {
    await Promise.all(procs.map(kill9));
    await site?.close();
    await chat?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("the resumed job converts the pages it had fetched instead of fetching them again; tokens charged once", async () => {
    site = await startSite([]);
    let answerModel!: () => void;
    // the model answers only once the owner was killed: both pages are fetched, and no step is stored before the kill
    chat = await startChatServer((req) => {
      const text = req.messages.map((m) => m.content).join("\n");
      return text.includes("Trail Runner")
        ? JSON.stringify({ data: { name: "Trail Runner 3" }, evidence: { "/name": "Trail Runner 3" } })
        : JSON.stringify({ data: { topic: "Kafka" }, evidence: { "/topic": "Kafka" } });
    }, { hold: new Promise<void>((r) => (answerModel = r)) });
    const start = starter(mode, dataDir, { EXTRACT_PROVIDER: "llm", OPENAI_BASE_URL: chat.baseUrl, OPENAI_API_KEY: "sk-local", MODEL_NAME: "local-model" });
    procs.push(await start());
    if (mode === "cluster") procs.push(await start());
    const logs = () => procs.map((p, i) => `--- process ${i}\n${p.output().slice(-3000)}`).join("\n");
    const all = () => procs.map((p) => p.output()).join("\n");

    const pages = ["/shop/trail-runner", "/blog/kafka"];
    const submitted = await postJson(`${procs[0]?.api}/v2/extract`, {
      urls: pages.map((p) => `${site!.origin}${p}`), schema: { type: "object", properties: { name: { type: "string" }, topic: { type: "string" } } },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const id = submitted.body.id as string;

    await until("both pages to wait for the model", 90_000, () => chat!.requests.length === 2, logs);
    for (const p of pages) expect(site.hits(p), p).toBe(1);
    const owner = procs.find((p) => lines(p.output(), id, "extract job running").length > 0) as Proc;
    expect(owner).toBeDefined();
    await kill9(owner);
    if (mode === "embedded") procs.push(await start());
    const api = (procs.find((p) => p !== owner && p.child.exitCode === null && p.child.signalCode === null) as Proc).api;
    answerModel();

    const job = await finished(api, id, logs);
    expect(job.status, JSON.stringify(job)).toBe("completed");
    expect(job.data).toEqual({ name: "Trail Runner 3", topic: "Kafka" });
    expect(lines(all(), id, "extract job running")).toHaveLength(2);
    // the pages the killed run had fetched: converted again from what the job kept, not fetched again
    for (const p of pages) expect(site.hits(p), p).toBe(1);
    expect(lines(all(), id, "extract page fetched before; converted again")).toHaveLength(2);
    // the model was asked again (its answers to the killed run were lost); only the resumed run's tokens count
    expect(chat.requests).toHaveLength(4);
    expect(job.tokensUsed).toBe(200);
  });
});
