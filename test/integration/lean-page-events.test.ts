// CRAWL_EVENTS_DOCUMENT=false (issue 46: a page crosses Kafka once less), in both modes: crawl.events' page events
// carry seq and urlKey and no document, and still match crawl-event.schema.json; crawl.pages is unchanged; page
// webhooks carry Firecrawl's `data` with the document and WebSocket watchers get a document frame per page, both read
// from the store. In cluster mode with the schema registry, the crawl-event version with urlKey is accepted as a
// compatible (BACKWARD) evolution of the one before it, and the lean events decode through the registry.
import { execFile } from "node:child_process";
import { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validator } from "../../schemas/index.ts";
import { bundledSchema } from "../../pipeline/runtime/registry.ts";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startReceiver, type Receiver } from "../fixtures/webhook-receiver.ts";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";
import { readTopic, type TopicReader } from "./topic-reader.ts";

const REGISTRY = process.env.TRAWL_TEST_REGISTRY_URL ?? `http://127.0.0.1:${process.env.TRAWL_REGISTRY_PORT ?? "18181"}/apis/ccompat/v7`;
const SECRET = "lean-secret";
const pathOf = (d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname;

describe.each(MODES)("page events without the document, %s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  let receiver: Receiver;
  let events: TopicReader;
  let pages: TopicReader;
  let crawlId: string;
  const frames: { type: string; data: any }[] = [];
  let closed: Promise<unknown>;
  beforeAll(async () => {
    [site, receiver, trawl] = await Promise.all([
      startFixtureSite({ delayMs: 50 }),
      startReceiver(SECRET),
      startTrawl({ mode, crawlEventsDocument: false, allowLocalWebhooks: true, webhookSecret: SECRET }),
    ]);
    events = readTopic(trawl, "crawl.events");
    pages = readTopic(trawl, "crawl.pages");
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000, webhook: receiver.url });
    crawlId = res.body.id;
    // a watcher from the start: most documents reach it as document frames of live page events
    const ws = new WebSocket(`${trawl.api.replace("http", "ws")}/v2/crawl/${crawlId}`);
    ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data))));
    closed = new Promise((r) => ws.addEventListener("close", r));
    await waitForEnd(trawl.api, crawlId);
    await closed;
    const end = Date.now() + 30_000;
    while (!receiver.received.some((r) => r.type === "crawl.completed") && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  }, 120_000);
  afterAll(async () => {
    await events?.stop();
    await pages?.stop();
    await trawl?.stop();
    await site?.close();
    await receiver?.close();
  });

  it("crawl.events' page events name their page by seq and urlKey, carry no document and match the public schema", async () => {
    const mine = (await events.messages()).filter(([key]) => key === crawlId).map(([, value]) => value);
    const validate = validator("crawl-event");
    expect(mine.every((e) => validate(e))).toBe(true);
    const pageEvents = mine.filter((e) => e.type === "crawl.page");
    expect(pageEvents).toHaveLength(expectedDocPaths().length);
    expect(pageEvents.every((e) => e.document === undefined && typeof e.urlKey === "string" && Number.isInteger(e.seq))).toBe(true);
    // crawl.pages still carries every document, each under the urlKey its event names
    const pageMessages = (await pages.messages()).filter(([key]) => key === crawlId).map(([, value]) => value);
    expect(pageMessages.map((p) => p.urlKey).sort()).toEqual(pageEvents.map((e) => e.urlKey).sort());
    expect(pageMessages.map((p) => pathOf(p.document)).sort()).toEqual(expectedDocPaths().sort());
  });

  it("page webhooks carry the stored document in data, signed", async () => {
    const stored = (await allChunks(trawl.api, crawlId)).flatMap((c) => c.body.data);
    const hooks = receiver.received.filter((r) => r.type === "crawl.page");
    expect(hooks).toHaveLength(expectedDocPaths().length);
    expect(hooks.every((r) => r.validSignature && r.id === crawlId && r.body.data.length === 1)).toBe(true);
    const byScrape = new Map(stored.map((d: any) => [d.metadata.scrapeId, d]));
    expect(hooks.map((r) => r.body.data[0]).every((d: any) => JSON.stringify(d) === JSON.stringify(byScrape.get(d.metadata.scrapeId)))).toBe(true);
    expect(receiver.received.at(-1)?.type).toBe("crawl.completed");
  });

  it("a WebSocket watcher gets every document (catchup and document frames), then done", async () => {
    expect(frames[0]?.type).toBe("catchup");
    // the crawl ran while the watcher listened: documents came as live frames too
    expect(frames.length).toBeGreaterThan(1);
    const docs = [...(frames[0]?.data.data ?? []), ...frames.slice(1).map((f) => f.data)];
    expect(frames.slice(1).every((f) => f.type === "document" && f.data?.metadata)).toBe(true);
    expect(docs.map(pathOf).sort()).toEqual(expectedDocPaths().sort());
  });
});

describe("page events without the document, through the schema registry (cluster mode)", () => {
  let trawl: Instance | undefined;
  let site: FixtureSite;
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("the crawl-event version with urlKey is accepted (BACKWARD) after the one without it, and the lean events decode through it", async () => {
    // a test tag (test/integration/leftovers.ts removes old ones)
    const prefix = `x${Date.now().toString(36)}.`;
    const subject = encodeURIComponent(`${prefix}crawl.events-value`);
    const before = structuredClone(bundledSchema("crawl-event")) as { properties: Record<string, unknown> };
    expect(before.properties.urlKey).toBeDefined();
    delete before.properties.urlKey;
    const headers = { "content-type": "application/vnd.schemaregistry.v1+json" };
    expect((await fetch(`${REGISTRY}/subjects/${subject}/versions`, { method: "POST", headers, body: JSON.stringify({ schemaType: "JSON", schema: JSON.stringify(before) }) })).status).toBe(200);
    expect((await fetch(`${REGISTRY}/config/${subject}`, { method: "PUT", headers, body: JSON.stringify({ compatibility: "BACKWARD" }) })).status).toBe(200);
    // the registry's own compatibility check of the new version against the registered one
    const check = await fetch(`${REGISTRY}/compatibility/subjects/${subject}/versions/latest`, { method: "POST", headers, body: JSON.stringify({ schemaType: "JSON", schema: JSON.stringify(bundledSchema("crawl-event")) }) });
    expect(check.status).toBe(200);
    expect(((await check.json()) as { is_compatible: boolean }).is_compatible).toBe(true);
    site = await startFixtureSite();
    trawl = await startTrawl({ mode: "cluster", schemaRegistryUrl: REGISTRY, topicPrefix: prefix, groupPrefix: prefix, crawlEventsDocument: false });
    const versions = (await (await fetch(`${REGISTRY}/subjects/${subject}/versions`)).json()) as number[];
    expect(versions).toHaveLength(2);
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1 });
    await waitForEnd(trawl.api, res.body.id);
    // each value as `<length>\n<bytes>`: the wire format is binary (magic byte 0, the schema id, then the JSON)
    const raw = await new Promise<Buffer>((resolve, reject) =>
      execFile("kcat", ["-b", trawl?.config.kafkaBrokers ?? "", "-C", "-t", `${prefix}crawl.events`, "-o", "beginning", "-e", "-q", "-f", "%S\\n%s"], { encoding: "buffer", maxBuffer: 1 << 24 }, (err, out) => (err ? reject(err) : resolve(out))));
    const values: Buffer[] = [];
    for (let at = 0; at < raw.length; ) {
      const nl = raw.indexOf(10, at);
      const length = Number(raw.subarray(at, nl).toString());
      values.push(raw.subarray(nl + 1, nl + 1 + length));
      at = nl + 1 + length;
    }
    expect(values.every((v) => v[0] === 0 && v.readInt32BE(1) === values[0]?.readInt32BE(1))).toBe(true);
    const decoded = await Promise.all(values.map((v) => new SchemaRegistry({ host: REGISTRY }).decode(v)));
    expect(decoded.map((e) => e.type)).toEqual(["crawl.started", "crawl.page", "crawl.completed"]);
    expect(decoded[1]).toMatchObject({ crawlId: res.body.id, seq: 0, urlKey: expect.any(String) });
    expect(decoded[1].document).toBeUndefined();
  });
});
