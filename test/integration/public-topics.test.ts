// Downstream consumers read the public topics: the kcat command and the Node.js example of docs/api.md, against a
// real crawl in cluster mode. Messages match the published JSON Schemas.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeCrawlPages, type CrawlPageMessage } from "../../docs/examples/consume-crawl-pages.ts";
import { validator } from "../../schemas/index.ts";
import { TEAM_BYPASS } from "../../pipeline/runtime/constants.ts";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const run = promisify(execFile);

describe("public topics (cluster mode)", () => {
  let trawl: Instance;
  let site: FixtureSite;
  let crawlId: string;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startFixtureSite(), startTrawl({ mode: "cluster" })]);
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000 });
    crawlId = res.body.id;
    await waitForEnd(trawl.api, crawlId);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("the Node.js example reads every page of the crawl, in completion order, matching crawl-page.schema.json", async () => {
    const pages: CrawlPageMessage[] = [];
    const reader = await consumeCrawlPages({
      brokers: trawl.config.kafkaBrokers.split(","),
      topic: `${trawl.config.topicPrefix}crawl.pages`,
      groupId: `${trawl.config.groupPrefix}downstream-test`,
      onPage: (p) => pages.push(p),
    });
    const end = Date.now() + 30_000;
    while (pages.length < expectedDocPaths().length && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    await reader.stop();
    const validate = validator("crawl-page");
    expect(pages.every((p) => validate(p))).toBe(true);
    expect(pages.every((p) => p.crawlId === crawlId)).toBe(true);
    // authentication off: every job belongs to the one anonymous team
    expect(pages.map((p) => p.teamId)).toEqual(pages.map(() => TEAM_BYPASS));
    expect(pages.map((p) => new URL(p.document.metadata.sourceURL).pathname).sort()).toEqual(expectedDocPaths().sort());
  });

  it("the kcat command of docs/api.md prints crawl.events, ending with crawl.completed", async () => {
    const topic = `${trawl.config.topicPrefix}crawl.events`;
    const { stdout } = await run("kcat", ["-b", trawl.config.kafkaBrokers, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k\\t%s\\n"], { maxBuffer: 64 * 1024 * 1024 });
    const events = stdout.trim().split("\n").map((line) => {
      const [key, value] = line.split("\t");
      return { key, value: JSON.parse(value as string) };
    });
    const validate = validator("crawl-event");
    expect(events.every((e) => e.key === crawlId && validate(e.value))).toBe(true);
    expect(events.map((e) => e.value.teamId)).toEqual(events.map(() => TEAM_BYPASS));
    const types = events.map((e) => e.value.type);
    expect(types[0]).toBe("crawl.started");
    expect(types.at(-1)).toBe("crawl.completed");
    expect(types.filter((t) => t === "crawl.page")).toHaveLength(expectedDocPaths().length);
  });

  // last: the tests above expect the crawl alone on the topics
  it("a batch scrape appears on crawl.events and crawl.pages as its own job kind", async () => {
    const urls = [`${site.origin}/docs/about`, `${site.origin}/docs/section-1/`];
    const res = await postJson(`${trawl.api}/v2/batch/scrape`, { urls });
    const batchId = res.body.id;
    await waitForEnd(trawl.api, batchId);
    const read = async (topic: string): Promise<any[]> => {
      const { stdout } = await run("kcat", ["-b", trawl.config.kafkaBrokers, "-C", "-t", `${trawl.config.topicPrefix}${topic}`, "-o", "beginning", "-e", "-q", "-f", "%k\\t%s\\n"], { maxBuffer: 64 * 1024 * 1024 });
      return stdout.trim().split("\n").map((line) => line.split("\t")).filter(([key]) => key === batchId).map(([, value]) => JSON.parse(value as string) as any);
    };
    const events = await read("crawl.events");
    expect(events.every((e) => validator("crawl-event")(e))).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(events.map(() => "batch"));
    expect(events.map((e) => e.type)).toEqual(["crawl.started", "crawl.page", "crawl.page", "crawl.completed"]);
    const pages = await read("crawl.pages");
    expect(pages).toHaveLength(2);
    expect(pages.every((p) => validator("crawl-page")(p))).toBe(true);
    expect(pages.map((p) => p.kind)).toEqual(["batch", "batch"]);
    expect([...events, ...pages].every((m) => m.teamId === TEAM_BYPASS)).toBe(true);
  });
});
