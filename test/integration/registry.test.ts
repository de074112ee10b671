// Public topics through a real Confluent-compatible Schema Registry (Apicurio, started by scripts/registry.sh):
// the schemas are registered at start, crawl.pages and crawl.events carry the wire format, the pipeline's own
// consumers still read them, and the Node.js example of docs/api.md decodes every page through the registry.
import { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { readTopic } from "./read-topic.ts";
import { createKafka } from "../../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeCrawlPages, type CrawlPageMessage } from "../../docs/examples/consume-crawl-pages.ts";
import { validator } from "../../schemas/index.ts";
import { bundledSchema } from "../../pipeline/runtime/registry.ts";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startReceiver, type Receiver } from "../fixtures/webhook-receiver.ts";
import { getJson, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

// the registry scripts/registry.sh serves (TRAWL_REGISTRY_PORT, default 18181), or any other
const REGISTRY = process.env.TRAWL_TEST_REGISTRY_URL ?? `http://127.0.0.1:${process.env.TRAWL_REGISTRY_PORT ?? "18181"}/apis/ccompat/v7`;

async function latestId(subject: string): Promise<number> {
  const res = await fetch(`${REGISTRY}/subjects/${encodeURIComponent(subject)}/versions/latest`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: number }).id;
}

describe("schema registry (cluster mode)", () => {
  let trawl: Instance;
  let site: FixtureSite;
  let receiver: Receiver;
  let crawlId: string;
  beforeAll(async () => {
    [site, receiver, trawl] = await Promise.all([
      startFixtureSite(),
      startReceiver("registry-secret"),
      startTrawl({ mode: "cluster", schemaRegistryUrl: REGISTRY, allowLocalWebhooks: true, webhookSecret: "registry-secret" }),
    ]);
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000, webhook: receiver.url });
    crawlId = res.body.id;
    await waitForEnd(trawl.api, crawlId);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
    await receiver?.close();
  });

  it("the pipeline reads its own wire-format topics: the crawl completes with every page", async () => {
    const status = await getJson(`${trawl.api}/v2/crawl/${crawlId}`);
    expect(status.body.status).toBe("completed");
    expect(status.body.data.map((d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(expectedDocPaths().sort());
  });

  it("webhook-emit reads the wire-format crawl.events: one signed page event per document, then completed", async () => {
    const end = Date.now() + 30_000;
    while (!receiver.received.some((r) => r.type === "crawl.completed") && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received.filter((r) => r.type === "crawl.page")).toHaveLength(expectedDocPaths().length);
    expect(receiver.received.every((r) => r.validSignature && r.id === crawlId)).toBe(true);
    expect(receiver.received.at(-1)?.type).toBe("crawl.completed");
  });

  it("the Node.js example decodes every page through the registry", async () => {
    const pages: CrawlPageMessage[] = [];
    const reader = await consumeCrawlPages({
      brokers: trawl.config.kafkaBrokers.split(","),
      topic: `${trawl.config.topicPrefix}crawl.pages`,
      groupId: `${trawl.config.groupPrefix}downstream-registry-test`,
      registryUrl: REGISTRY,
      onPage: (p) => pages.push(p),
    });
    const end = Date.now() + 30_000;
    while (pages.length < expectedDocPaths().length && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    await reader.stop();
    const validate = validator("crawl-page");
    expect(pages.every((p) => validate(p) && p.crawlId === crawlId)).toBe(true);
    expect(pages.map((p) => new URL(p.document.metadata.sourceURL).pathname).sort()).toEqual(expectedDocPaths().sort());
  });

  it("every crawl.events message carries the magic byte and the id registered under <topic>-value", async () => {
    const topic = `${trawl.config.topicPrefix}crawl.events`;
    const id = await latestId(`${topic}-value`);
    const registry = new SchemaRegistry({ host: REGISTRY });
    const kafka = createKafka(trawl.config, "registry-test", createLogger("silent"));
    const raw = await readTopic(kafka, topic, `${trawl.config.groupPrefix}raw-events-test`, (v) => v.some((b) => b.includes("crawl.completed")), 30_000);
    expect(raw.every((b) => b[0] === 0 && b.readInt32BE(1) === id)).toBe(true);
    const events = await Promise.all(raw.map((b) => registry.decode(b)));
    const validate = validator("crawl-event");
    expect(events.every((e) => validate(e))).toBe(true);
    expect(events.filter((e) => e.type === "crawl.page")).toHaveLength(expectedDocPaths().length);
    expect(events.at(-1).type).toBe("crawl.completed");
  });

  it("crawl.changes is registered and carries the wire format: a change-tracking crawl's records decode and match crawl-change.schema.json", async () => {
    const topic = `${trawl.config.topicPrefix}crawl.changes`;
    const id = await latestId(`${topic}-value`);
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1, scrapeOptions: { formats: ["markdown", "changeTracking"] } });
    const jobId = res.body.id as string;
    await waitForEnd(trawl.api, jobId);
    const registry = new SchemaRegistry({ host: REGISTRY });
    const kafka = createKafka(trawl.config, "registry-test", createLogger("silent"));
    const raw = await readTopic(kafka, topic, `${trawl.config.groupPrefix}raw-changes-test`, (v) => v.length > 0, 30_000);
    expect(raw.length).toBe(1);
    expect(raw.every((b) => b[0] === 0 && b.readInt32BE(1) === id)).toBe(true);
    const [change] = await Promise.all(raw.map((b) => registry.decode(b)));
    expect(validator("crawl-change")(change)).toBe(true);
    expect(change).toMatchObject({ crawlId: jobId, changeStatus: "new", url: `${site.origin}/docs/about`, previousScrapeAt: null });
  });

  it("a schema the registry refuses as incompatible stops the start with SCHEMA_REJECTED", async () => {
    const prefix = `reject${Date.now().toString(36)}.`;
    const res = await fetch(`${REGISTRY}/subjects/${encodeURIComponent(`${prefix}crawl.pages-value`)}/versions`, {
      method: "POST",
      headers: { "content-type": "application/vnd.schemaregistry.v1+json" },
      body: JSON.stringify({ schemaType: "JSON", schema: JSON.stringify({ type: "object", properties: { crawlId: { type: "integer" } }, required: ["crawlId"] }) }),
    });
    expect(res.status).toBe(200);
    // the operators' rule for this subject: new versions must read the old data
    const config = await fetch(`${REGISTRY}/config/${encodeURIComponent(`${prefix}crawl.pages-value`)}`, {
      method: "PUT",
      headers: { "content-type": "application/vnd.schemaregistry.v1+json" },
      body: JSON.stringify({ compatibility: "BACKWARD" }),
    });
    expect(config.status).toBe(200);
    await expect(startTrawl({ mode: "cluster", schemaRegistryUrl: REGISTRY, topicPrefix: prefix, groupPrefix: prefix })).rejects.toMatchObject({ code: "SCHEMA_REJECTED" });
  });

  it("the versions with teamId are accepted as compatible (BACKWARD) after the versions without it", async () => {
    const prefix = `teamid${Date.now().toString(36)}.`;
    for (const [topic, schema] of [["crawl.pages", "crawl-page"], ["crawl.events", "crawl-event"]] as const) {
      const subject = encodeURIComponent(`${prefix}${topic}-value`);
      const before = structuredClone(bundledSchema(schema)) as { properties: Record<string, unknown> };
      expect(before.properties.teamId).toBeDefined();
      delete before.properties.teamId;
      const headers = { "content-type": "application/vnd.schemaregistry.v1+json" };
      expect((await fetch(`${REGISTRY}/subjects/${subject}/versions`, { method: "POST", headers, body: JSON.stringify({ schemaType: "JSON", schema: JSON.stringify(before) }) })).status).toBe(200);
      expect((await fetch(`${REGISTRY}/config/${subject}`, { method: "PUT", headers, body: JSON.stringify({ compatibility: "BACKWARD" }) })).status).toBe(200);
    }
    const upgraded = await startTrawl({ mode: "cluster", schemaRegistryUrl: REGISTRY, topicPrefix: prefix, groupPrefix: prefix });
    await upgraded.stop();
    for (const topic of ["crawl.pages", "crawl.events"]) {
      const versions = (await (await fetch(`${REGISTRY}/subjects/${encodeURIComponent(`${prefix}${topic}-value`)}/versions`)).json()) as number[];
      expect(versions, topic).toHaveLength(2);
    }
  });

  it("the versions of crawl.pages with freshness and crawl.events with the change summary are accepted as compatible (BACKWARD) after those without", async () => {
    const prefix = `ctrack${Date.now().toString(36)}.`;
    const subject = encodeURIComponent(`${prefix}crawl.pages-value`);
    const before = structuredClone(bundledSchema("crawl-page")) as { properties: Record<string, unknown>; $defs?: Record<string, { properties?: Record<string, unknown> }> };
    // the previous release: no freshness, and nothing about change tracking in the document (declaring
    // document.changeTracking would narrow that open object: incompatible, so it stays undeclared)
    expect(before.properties.freshness).toBeDefined();
    delete before.properties.freshness;
    for (const [name, def] of Object.entries(before.$defs ?? {})) {
      if (name.includes("freshness")) delete before.$defs?.[name];
      else delete def.properties?.changeTracking;
    }
    // crawl.events before crawl.completed carried changeTracking (the counts of a change-tracking job)
    const events = structuredClone(bundledSchema("crawl-event")) as { properties: Record<string, unknown> };
    expect(events.properties.changeTracking).toBeDefined();
    delete events.properties.changeTracking;
    const eventsSubject = encodeURIComponent(`${prefix}crawl.events-value`);
    const headers = { "content-type": "application/vnd.schemaregistry.v1+json" };
    for (const [sub, schema] of [[subject, before], [eventsSubject, events]] as const) {
      expect((await fetch(`${REGISTRY}/subjects/${sub}/versions`, { method: "POST", headers, body: JSON.stringify({ schemaType: "JSON", schema: JSON.stringify(schema) }) })).status).toBe(200);
      expect((await fetch(`${REGISTRY}/config/${sub}`, { method: "PUT", headers, body: JSON.stringify({ compatibility: "BACKWARD" }) })).status).toBe(200);
    }
    const upgraded = await startTrawl({ mode: "cluster", schemaRegistryUrl: REGISTRY, topicPrefix: prefix, groupPrefix: prefix });
    await upgraded.stop();
    for (const sub of [subject, eventsSubject]) {
      const versions = (await (await fetch(`${REGISTRY}/subjects/${sub}/versions`)).json()) as number[];
      expect(versions, sub).toHaveLength(2);
    }
  });
});
