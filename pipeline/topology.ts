// The whole topology in one place: every topic, its key, who produces and who consumes it, and every processor
// (the consume loops) with its topic and consumer group. Processors take their topic, schema and group from here.
// topology.test.ts checks it against the code: every topic has a producer and a consumer, every processor is declared,
// and the roles that emit to a topic are the ones declared as its producers.
import type { SchemaName } from "../schemas/index.ts";

/** Every role (`trawl <role>`, each scalable on its own), in start order, with what it does: `trawl --help` lists these. */
export const roles = {
  api: "HTTP and WebSocket API (/v2/...); runs POST /v2/extract jobs (extract.jobs)",
  frontier: "crawl state machine over frontier.inbox; per-team admission (team.admission); retention sweep",
  "fetch-render": "fetches pages (fetch.tasks -> pages.fetched, or render.tasks for pages that need a browser)",
  render: "renders pages in headless Chromium (render.tasks -> pages.fetched)",
  convert: "HTML -> markdown, links, metadata (pages.fetched -> crawl.pages, or pages.extract for json/summary)",
  "extract-json": "json and summary formats: rules or LLM provider (pages.extract -> crawl.pages)",
  sink: "stores documents (crawl.pages -> ClickHouse or DATA_DIR)",
  "webhook-emit": "signed webhooks with retries (crawl.events -> webhook.deliveries -> HTTP)",
} as const;

export type Role = keyof typeof roles;

export type LogicalTopic =
  | "frontier.inbox"
  | "fetch.tasks"
  | "render.tasks"
  | "pages.fetched"
  | "pages.extract"
  | "crawl.pages"
  | "crawl.events"
  | "crawl.changes"
  | "webhook.deliveries"
  | "webhook.retries"
  | "webhook.parked"
  | "extract.jobs"
  | "team.admission";

export interface TopicSpec {
  name: LogicalTopic;
  /** How the message key is built; the partitioner hashes it. */
  key: string;
  why: string;
  schema: SchemaName;
  public: boolean;
  retentionMs: number;
  producers: Role[];
  consumers: Role[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

export const topics: readonly TopicSpec[] = [
  {
    name: "frontier.inbox",
    key: "crawlId",
    why: "one owner per crawl sees every event of that crawl in order",
    schema: "frontier-inbox",
    public: false,
    retentionMs: 7 * DAY_MS,
    producers: ["api", "fetch-render", "render", "convert", "sink", "frontier"],
    consumers: ["frontier"],
  },
  {
    name: "fetch.tasks",
    key: "host (registrable domain with POLITENESS_SCOPE=domain; tasks keyed crawlId + host before are still handled)",
    why: "one fetch-render replica owns a host for every crawl, team and replica, so its politeness is one; a many-host crawl spreads over all partitions; fetch-render sends back a task that waited too long for its host",
    schema: "fetch-task",
    public: false,
    retentionMs: 2 * DAY_MS,
    producers: ["frontier", "fetch-render"],
    consumers: ["fetch-render"],
  },
  {
    name: "render.tasks",
    key: "host (as fetch.tasks)",
    why: "pages that need a browser, scaled apart from the static fetchers; one owner per host as in fetch.tasks",
    schema: "render-task",
    public: false,
    retentionMs: 2 * DAY_MS,
    producers: ["fetch-render"],
    consumers: ["render"],
  },
  {
    name: "pages.fetched",
    key: "crawlId + url key",
    why: "spreads CPU-bound conversion",
    schema: "page-fetched",
    public: false,
    retentionMs: 1 * DAY_MS,
    producers: ["fetch-render", "render"],
    consumers: ["convert"],
  },
  {
    name: "pages.extract",
    key: "crawlId + url key",
    why: "spreads CPU-bound extraction",
    schema: "page-extract",
    public: false,
    retentionMs: 1 * DAY_MS,
    producers: ["convert"],
    consumers: ["extract-json"],
  },
  {
    name: "crawl.pages",
    key: "crawlId",
    why: "downstream consumers read one crawl in order; sink owns ordering per crawl",
    schema: "crawl-page",
    public: true,
    retentionMs: 7 * DAY_MS,
    producers: ["convert", "extract-json"],
    consumers: ["sink"],
  },
  {
    name: "crawl.events",
    key: "crawlId",
    why: "started / page / completed / failed / cancelled in order per crawl",
    schema: "crawl-event",
    public: true,
    retentionMs: 7 * DAY_MS,
    producers: ["frontier", "sink"],
    consumers: ["api", "webhook-emit"],
  },
  {
    name: "crawl.changes",
    key: "crawlId",
    why: "the change feed: a job's new, changed and removed pages in order per job (changeTracking format); read only downstream",
    schema: "crawl-change",
    public: true,
    retentionMs: 7 * DAY_MS,
    producers: ["sink", "frontier"],
    consumers: [],
  },
  {
    name: "webhook.deliveries",
    key: "crawlId",
    why: "first attempts of webhook events, one lane per crawl: a crawl's events go out in order",
    schema: "webhook-delivery",
    public: false,
    retentionMs: 2 * DAY_MS,
    producers: ["webhook-emit"],
    consumers: ["webhook-emit"],
  },
  {
    name: "webhook.retries",
    key: "crawlId + event id",
    why: "failed attempts wait here for their time, out of the way of fresh events; spread over the partitions",
    schema: "webhook-delivery",
    public: false,
    retentionMs: 2 * DAY_MS,
    producers: ["webhook-emit"],
    consumers: ["webhook-emit"],
  },
  {
    name: "webhook.parked",
    key: "endpoint (scheme + host + port)",
    why: "first attempts to an endpoint that is busy or slow wait here, in order per crawl, out of the way of other endpoints' events; one owner per endpoint",
    schema: "webhook-delivery",
    public: false,
    retentionMs: 2 * DAY_MS,
    producers: ["webhook-emit"],
    consumers: ["webhook-emit"],
  },
  {
    name: "extract.jobs",
    key: "extract job id",
    why: "POST /v2/extract jobs shared by the API replicas; a dead replica's partitions (and so its unfinished jobs) go to another",
    schema: "extract-job",
    public: false,
    retentionMs: 2 * DAY_MS,
    producers: ["api"],
    consumers: ["api"],
  },
  {
    name: "team.admission",
    key: "teamId",
    why: "one owner per team sees every job of that team ask to run and end, in order: the per-team concurrency limit across all its crawls and batches",
    schema: "team-admission",
    public: false,
    retentionMs: 7 * DAY_MS,
    producers: ["frontier"],
    consumers: ["frontier"],
  },
];

/** Every consume loop of Trawl: which role runs it, on which topic, as which consumer group. */
export interface ProcessorSpec {
  role: Role;
  topic: LogicalTopic;
  /**
   * Consumer group id (the configured group prefix is added). Kept as first deployed: renaming a group would make
   * it start over from the beginning of its topic (webhook deliveries replayed).
   */
  group: string;
  /** Every process gets every message (its own group per process, from the end of the topic). */
  broadcast?: boolean;
  /**
   * A topic that is empty most of the time, or whose every message takes long to handle (render: a browser page), so
   * that bigger batches gain nothing: the loop's fetch never waits for KAFKA_FETCH_MIN_BYTES, it is answered as soon
   * as one message is there, and while there is none it waits up to KAFKA_IDLE_FETCH_MAX_WAIT_MS on the broker. The
   * other (bulk) loops wait for bytes while messages flow and fetch this way only after a fetch that brought nothing
   * (runtime/runner.ts, fetchFrom). Not for a topic that carries every page and is handled fast: its loop would fetch a few
   * messages at a time, as fast as the broker answers.
   */
  sparse?: boolean;
}

export const processors = {
  frontier: { role: "frontier", topic: "frontier.inbox", group: "frontier" },
  "fetch-render": { role: "fetch-render", topic: "fetch.tasks", group: "fetch-render" },
  render: { role: "render", topic: "render.tasks", group: "render", sparse: true },
  convert: { role: "convert", topic: "pages.fetched", group: "convert" },
  "extract-json": { role: "extract-json", topic: "pages.extract", group: "extract-json" },
  sink: { role: "sink", topic: "crawl.pages", group: "sink" },
  "webhook-emit": { role: "webhook-emit", topic: "crawl.events", group: "webhook-emit" },
  "webhook-deliver": { role: "webhook-emit", topic: "webhook.deliveries", group: "webhook-deliver", sparse: true },
  "webhook-retry": { role: "webhook-emit", topic: "webhook.retries", group: "webhook-retry", sparse: true },
  "webhook-park": { role: "webhook-emit", topic: "webhook.parked", group: "webhook-park", sparse: true },
  "api-events": { role: "api", topic: "crawl.events", group: "api-events", broadcast: true },
  "extract-jobs": { role: "api", topic: "extract.jobs", group: "extract-jobs", sparse: true },
  admission: { role: "frontier", topic: "team.admission", group: "admission", sparse: true },
} as const satisfies Record<string, ProcessorSpec>;

export type ProcessorName = keyof typeof processors;

/** A processor's identity as the runner needs it: name, topic, the topic's schema, whether it broadcasts, whether it is sparse. */
export function processorIdentity<N extends ProcessorName>(name: N) {
  const spec: ProcessorSpec = processors[name];
  return { name, topic: spec.topic as (typeof processors)[N]["topic"], schema: topicSpec(spec.topic).schema, group: spec.group, broadcast: spec.broadcast === true, sparse: spec.sparse === true };
}

export function topicSpec(name: LogicalTopic): TopicSpec {
  const spec = topics.find((t) => t.name === name);
  if (!spec) throw new Error(`unknown topic ${name}`);
  return spec;
}

/** Physical name: configured prefix + logical name. Dead-letter topics add `.dlq`. */
export function physicalTopic(prefix: string, name: LogicalTopic, dlq = false): string {
  return `${prefix}${name}${dlq ? ".dlq" : ""}`;
}

/** Message keys, built in one place so that producers cannot disagree. */
export const keys = {
  crawl: (crawlId: string) => crawlId,
  team: (teamId: string) => teamId,
  /** fetch.tasks and render.tasks: the politeness key of the URL (host, or registrable domain; url/politeness-key.ts) */
  politeness: (politenessKey: string) => politenessKey,
  /** the key of fetch.tasks and render.tasks before they were keyed by host (still in topics after an upgrade) */
  crawlHost: (crawlId: string, url: string) => `${crawlId}|${new URL(url).host}`,
  crawlUrl: (crawlId: string, urlKey: string) => `${crawlId}|${urlKey}`,
  crawlEvent: (crawlId: string, eventId: string) => `${crawlId}|${eventId}`,
  /** a webhook endpoint: scheme + host + port (pipeline/webhook-emit/endpoints.ts) */
  endpoint: (endpoint: string) => endpoint,
  extractJob: (jobId: string) => jobId,
};
