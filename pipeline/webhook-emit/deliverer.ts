// webhook-emit, part 2: webhook.deliveries -> HTTP POSTs. One attempt per message; a failed attempt goes back to the
// topic with attempt + 1 and a time before which it must not run, so retries survive a restart. Every attempt is
// logged. Destinations on private addresses are refused (unless ALLOW_LOCAL_WEBHOOKS) and never retried.
import { request, type Agent } from "undici";
import type { WebhookDelivery } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import { sleep } from "../runtime/retry.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { PRIVATE_ADDRESS_REFUSED, refusedLiteral } from "../net/guarded-agent.ts";
import { keys, processorIdentity } from "../topology.ts";
import { retryDelay } from "./payload.ts";

export interface DelivererDeps {
  agent: Agent;
  store: CrawlStore;
  clock: Clock;
  log: Logger;
  allowLocal: boolean;
  timeoutMs: number;
  maxAttempts: number;
  retryDelaysMs: number[];
}

/** How long a not-yet-due delivery is held before it goes back to the end of the topic. */
const HOLD_MS = 1000;

/** Topic, schema and consumer group as pipeline/topology.ts declares them. */
const ID = processorIdentity("webhook-deliver");

export class WebhookDeliverer implements Processor<WebhookDelivery, void> {
  readonly name = ID.name;
  readonly topic = ID.topic;
  readonly schema = ID.schema;
  readonly group = ID.group;
  readonly broadcast = ID.broadcast;
  // in order per crawl on the happy path (started, pages, completed); partitions run side by side
  readonly mode = "ordered" as const;
  readonly concurrency = 1;
  private readonly deps: DelivererDeps;
  private readonly log: Logger;

  constructor(deps: DelivererDeps) {
    this.deps = deps;
    this.log = deps.log.child({ component: "webhook-deliver" });
  }

  createBatch(): void {}

  async handle(msg: Consumed<WebhookDelivery>): Promise<Emission[]> {
    const d = msg.value;
    const { deps } = this;
    const wait = d.notBefore - deps.clock.now();
    if (wait > 0) {
      await sleep(Math.min(wait, HOLD_MS));
      if (d.notBefore > deps.clock.now()) return [{ topic: "webhook.deliveries", key: keys.crawl(d.crawlId), value: d }];
    }
    const outcome = await this.attempt(d);
    await deps.store.logDeliveries([{ crawlId: d.crawlId, eventId: d.eventId, event: d.event, url: d.url, statusCode: outcome.status, attempt: d.attempt, error: outcome.error, at: deps.clock.now() }]);
    const ctx = { crawlId: d.crawlId, event: d.event, attempt: d.attempt, status: outcome.status };
    if (outcome.ok) {
      this.log.debug(ctx, "webhook delivered");
      return [];
    }
    if (!outcome.retriable || d.attempt >= deps.maxAttempts) {
      this.log.warn({ ...ctx, err: outcome.error }, "webhook given up");
      return [];
    }
    const delay = retryDelay(deps.retryDelaysMs, d.attempt);
    this.log.info({ ...ctx, err: outcome.error, delayMs: delay }, "webhook failed, will retry");
    return [{ topic: "webhook.deliveries", key: keys.crawl(d.crawlId), value: { ...d, attempt: d.attempt + 1, notBefore: deps.clock.now() + delay } }];
  }

  private async attempt(d: WebhookDelivery): Promise<{ ok: boolean; retriable: boolean; status: number; error: string }> {
    const literal = refusedLiteral(d.url, this.deps.allowLocal);
    if (literal) return { ok: false, retriable: false, status: 0, error: `refused: ${literal} is a private address (set ALLOW_LOCAL_WEBHOOKS=true to allow)` };
    try {
      const res = await request(d.url, {
        method: "POST",
        dispatcher: this.deps.agent,
        headers: d.headers,
        body: d.body,
        signal: AbortSignal.timeout(this.deps.timeoutMs),
      });
      await res.body.dump();
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { ok, retriable: !ok, status: res.statusCode, error: ok ? "" : `HTTP ${res.statusCode}` };
    } catch (err) {
      const e = err as { code?: string; cause?: { code?: string }; message?: string; name?: string };
      const code = e.code ?? e.cause?.code ?? "";
      if (code === PRIVATE_ADDRESS_REFUSED) return { ok: false, retriable: false, status: 0, error: `refused: ${e.message} (set ALLOW_LOCAL_WEBHOOKS=true to allow)` };
      const why = e.name === "TimeoutError" ? `no answer within ${this.deps.timeoutMs} ms` : `${code || e.name}: ${e.message}`;
      return { ok: false, retriable: true, status: 0, error: why };
    }
  }
}
