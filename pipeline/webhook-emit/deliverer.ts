// webhook-emit, part 2: the HTTP POSTs of webhook events, isolated per endpoint (scheme + host + port). A slow or dead
// endpoint delays only its own events:
// - The three consumers run in keyed mode (runtime/lanes.ts): a message that waits (an attempt up to
//   WEBHOOK_TIMEOUT_MS, a slot, a retry's time) holds only its lane, never the partition; offsets move over the
//   longest prefix whose attempts are logged and whose follow-ups (a retry, a parked event) are acknowledged.
// - Bounded concurrency: at most WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight per endpoint and process
//   (endpoints.ts), whichever of its URLs and crawls they are for; the breaker counts failures per endpoint.
// - Bounded time: first attempts (WebhookDeliverer, webhook.deliveries, keyed by crawl; one lane per crawl, so a
//   crawl's events go out in order) never wait for an endpoint. An event is parked instead, on webhook.parked keyed by
//   its endpoint, when the endpoint has no free slot or the event already waited longer than one time limit; from then
//   on every later event of that crawl is parked too (in order behind it). WebhookParked delivers them, one lane per
//   crawl, waiting for the endpoint's slots: what waits on a slow endpoint waits there, not among other endpoints'
//   first attempts.
// - Failed attempts go to webhook.retries with attempt + 1 and the time before which they must not run (WebhookRetrier,
//   one lane per event), so retries survive a restart and never stand in front of fresh events.
// Every attempt is logged (attempt.ts). Order: a crawl's first attempts reach its endpoint in event order (a crawl has
// one webhook URL); a retried event arrives after later ones, as before; after a restart or a rebalance, a crawl whose
// earlier events are still parked may have a later one delivered first (which crawls are parked is kept in memory).
import type { WebhookDelivery } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import { TrawlError } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import { PartitionCache } from "../runtime/partition-cache.ts";
import { sleep } from "../runtime/retry.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";
import { keys } from "../topology.ts";
import { deliver, toRetries, type DelivererDeps } from "./attempt.ts";
import { endpointOf } from "./endpoints.ts";

export type { DelivererDeps } from "./attempt.ts";

/** Messages of one partition not done at most, per consumer (the lanes' window). */
const WINDOW = 256;
/** Crawls remembered as parked at most (the oldest forgotten first). */
const MAX_PARKED = 10_000;

const toParked = (d: WebhookDelivery, endpoint: string): Emission => ({ topic: "webhook.parked", key: keys.endpoint(endpoint), value: d });

/** First attempts: one lane per crawl (the message key). */
export class WebhookDeliverer extends DeclaredProcessor implements Processor<WebhookDelivery, void> {
  readonly mode = "keyed" as const;
  readonly concurrency = WINDOW;
  private readonly deps: DelivererDeps;
  private readonly log: Logger;
  /** Crawls whose events go to webhook.parked (by the partition of webhook.deliveries they came from). */
  private readonly parked = new PartitionCache<true>();

  constructor(deps: DelivererDeps) {
    super("webhook-deliver");
    this.deps = deps;
    this.log = deps.log.child({ component: "webhook-deliver" });
  }

  createBatch(): void {}

  onPartitionsAssigned(partitions: number[]): void {
    this.parked.retain(partitions);
  }

  async handle(msg: Consumed<WebhookDelivery>): Promise<Emission[]> {
    const d = msg.value;
    const now = this.deps.clock.now();
    // a retry written to this topic by an earlier version waits on webhook.retries instead
    if (d.notBefore > now) return [toRetries(d)];
    const endpoint = endpointOf(d.url);
    const release = this.parked.get(d.crawlId) || now - d.notBefore > this.deps.timeoutMs ? null : this.deps.slots.tryTake(endpoint);
    if (!release) return this.park(msg, endpoint, now);
    try {
      return await deliver(this.deps, this.log, d, endpoint);
    } finally {
      release();
    }
  }

  private park(msg: Consumed<WebhookDelivery>, endpoint: string, now: number): Emission[] {
    const d = msg.value;
    if (!this.parked.get(d.crawlId)) {
      const why = now - d.notBefore > this.deps.timeoutMs ? "its events wait longer than the time limit" : "the endpoint has no free slot";
      this.log.info({ crawlId: d.crawlId, endpoint, event: d.event, waitedMs: now - d.notBefore }, `webhook events of the crawl parked: ${why}`);
      this.parked.set(d.crawlId, msg.partition, true);
      if (this.parked.size > MAX_PARKED) this.parked.delete(this.parked.oldest() as string);
    }
    return [toParked(d, endpoint)];
  }
}

/** Parked first attempts: one lane per crawl, each attempt waiting for a slot of its endpoint. */
export class WebhookParked extends DeclaredProcessor implements Processor<WebhookDelivery, void> {
  readonly mode = "keyed" as const;
  readonly concurrency = WINDOW;
  private readonly deps: DelivererDeps;
  private readonly log: Logger;

  constructor(deps: DelivererDeps) {
    super("webhook-park");
    this.deps = deps;
    this.log = deps.log.child({ component: "webhook-park" });
  }

  createBatch(): void {}

  lane(msg: Consumed<WebhookDelivery>): string {
    return msg.value.crawlId;
  }

  async handle(msg: Consumed<WebhookDelivery>): Promise<Emission[]> {
    const endpoint = endpointOf(msg.value.url);
    const release = await this.deps.slots.take(endpoint, this.deps.stopping);
    // stopping: left undone, delivered again (in its crawl's order) after the restart
    if (!release) throw new TrawlError("DELIVERY_INTERRUPTED", "the process is stopping; the parked event is delivered after the restart", { retriable: true });
    try {
      return await deliver(this.deps, this.log, msg.value, endpoint);
    } finally {
      release();
    }
  }
}

/** Later attempts: one lane per event (the message key), each waiting for its time, then for a slot of its endpoint. */
export class WebhookRetrier extends DeclaredProcessor implements Processor<WebhookDelivery, void> {
  readonly mode = "keyed" as const;
  readonly concurrency = WINDOW;
  private readonly deps: DelivererDeps;
  private readonly log: Logger;

  constructor(deps: DelivererDeps) {
    super("webhook-retry");
    this.deps = deps;
    this.log = deps.log.child({ component: "webhook-retry" });
  }

  createBatch(): void {}

  async handle(msg: Consumed<WebhookDelivery>): Promise<Emission[]> {
    const d = msg.value;
    const { clock, stopping } = this.deps;
    if (d.notBefore > clock.now()) await sleep(d.notBefore - clock.now(), stopping);
    const endpoint = endpointOf(d.url);
    // a retry still waiting at a stop goes back to its topic instead of holding the stop (retries keep no order)
    const release = stopping.aborted ? null : await this.deps.slots.take(endpoint, stopping);
    if (!release) return [toRetries(d)];
    try {
      return await deliver(this.deps, this.log, d, endpoint);
    } finally {
      release();
    }
  }
}
