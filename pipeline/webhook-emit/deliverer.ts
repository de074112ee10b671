// webhook-emit, part 2: HTTP POSTs of webhook events. First attempts come from webhook.deliveries, in order per crawl
// (WebhookDeliverer). A failed attempt goes to webhook.retries with attempt + 1 and the time before which it must not
// run (WebhookRetrier), so retries survive a restart and never stand in front of fresh events: one dead endpoint
// delays only retries, never another crawl's events. Every attempt is logged. Destinations on private addresses are
// refused (unless ALLOW_LOCAL_WEBHOOKS) and never retried.
import { request, type Agent } from "undici";
import type { WebhookDelivery } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Metrics } from "../runtime/metrics.ts";
import type { Logger } from "../runtime/logger.ts";
import { sleep } from "../runtime/retry.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { PRIVATE_ADDRESS_REFUSED, refusedLiteral } from "../net/guarded-agent.ts";
import { keys } from "../topology.ts";
import type { EndpointBreaker } from "./endpoint-breaker.ts";
import { retryDelay } from "./payload.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";

export interface DelivererDeps {
  agent: Agent;
  store: CrawlStore;
  clock: Clock;
  log: Logger;
  allowLocal: boolean;
  timeoutMs: number;
  maxAttempts: number;
  retryDelaysMs: number[];
  /** attempts by result (ok, retry, failed) */
  metrics?: Metrics;
  /** Suspends a URL that keeps failing (shared by first attempts and retries of one process). */
  breaker: EndpointBreaker;
}

const toRetries = (d: WebhookDelivery): Emission => ({ topic: "webhook.retries", key: keys.crawlEvent(d.crawlId, d.eventId), value: d });

/** One attempt of a delivery, logged; the next attempt (on webhook.retries) when it failed and may be retried. */
async function deliver(deps: DelivererDeps, log: Logger, d: WebhookDelivery): Promise<Emission[]> {
  const outcome = await attempt(deps, d);
  await deps.store.logDeliveries([{ crawlId: d.crawlId, eventId: d.eventId, event: d.event, url: d.url, statusCode: outcome.status, attempt: d.attempt, error: outcome.error, at: deps.clock.now() }]);
  const ctx = { crawlId: d.crawlId, event: d.event, attempt: d.attempt, status: outcome.status };
  if (outcome.ok) {
    log.debug(ctx, "webhook delivered");
    deps.metrics?.webhookAttempts.inc({ result: "ok" });
    return [];
  }
  if (!outcome.retriable || d.attempt >= deps.maxAttempts) {
    log.warn({ ...ctx, err: outcome.error }, "webhook given up");
    deps.metrics?.webhookAttempts.inc({ result: "failed" });
    return [];
  }
  const delay = retryDelay(deps.retryDelaysMs, d.attempt);
  log.info({ ...ctx, err: outcome.error, delayMs: delay }, "webhook failed, will retry");
  deps.metrics?.webhookAttempts.inc({ result: "retry" });
  return [toRetries({ ...d, attempt: d.attempt + 1, notBefore: deps.clock.now() + delay })];
}

async function attempt(deps: DelivererDeps, d: WebhookDelivery): Promise<{ ok: boolean; retriable: boolean; status: number; error: string }> {
  const now = deps.clock.now();
  const until = deps.breaker.suspendedUntil(d.url, now);
  if (until > 0) return { ok: false, retriable: true, status: 0, error: `not attempted: the endpoint failed several times in a row and is suspended for ${until - now} ms more` };
  const outcome = await httpAttempt(deps, d);
  if (outcome.ok || outcome.retriable) deps.breaker.record(d.url, outcome.ok, deps.clock.now());
  return outcome;
}

async function httpAttempt(deps: DelivererDeps, d: WebhookDelivery): Promise<{ ok: boolean; retriable: boolean; status: number; error: string }> {
  const literal = refusedLiteral(d.url, deps.allowLocal);
  if (literal) return { ok: false, retriable: false, status: 0, error: `refused: ${literal} is a private address (set ALLOW_LOCAL_WEBHOOKS=true to allow)` };
  try {
    const res = await request(d.url, { method: "POST", dispatcher: deps.agent, headers: d.headers, body: d.body, signal: AbortSignal.timeout(deps.timeoutMs) });
    await res.body.dump();
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return { ok, retriable: !ok, status: res.statusCode, error: ok ? "" : `HTTP ${res.statusCode}` };
  } catch (err) {
    const e = err as { code?: string; cause?: { code?: string }; message?: string; name?: string };
    const code = e.code ?? e.cause?.code ?? "";
    if (code === PRIVATE_ADDRESS_REFUSED) return { ok: false, retriable: false, status: 0, error: `refused: ${e.message} (set ALLOW_LOCAL_WEBHOOKS=true to allow)` };
    const why = e.name === "TimeoutError" ? `no answer within ${deps.timeoutMs} ms` : `${code || e.name}: ${e.message}`;
    return { ok: false, retriable: true, status: 0, error: why };
  }
}

/** First attempts, in order per crawl (started, pages, completed). */
export class WebhookDeliverer extends DeclaredProcessor implements Processor<WebhookDelivery, void> {
  readonly mode = "ordered" as const;
  readonly concurrency = 1;
  private readonly deps: DelivererDeps;
  private readonly log: Logger;

  constructor(deps: DelivererDeps) {
    super("webhook-deliver");
    this.deps = deps;
    this.log = deps.log.child({ component: "webhook-deliver" });
  }

  createBatch(): void {}

  async handle(msg: Consumed<WebhookDelivery>): Promise<Emission[]> {
    // a retry written to this topic by an earlier version waits on webhook.retries instead
    if (msg.value.notBefore > this.deps.clock.now()) return [toRetries(msg.value)];
    return deliver(this.deps, this.log, msg.value);
  }
}

/** How long the retrier sleeps at a time while the head of a partition is not due (it checks for a stop between). */
const NAP_MS = 500;

/**
 * Later attempts. Within a partition retries are in the order they failed, so the head is the next one due: the
 * retrier waits for it (nothing is written again while it waits, so a dead endpoint does not grow the log).
 */
export class WebhookRetrier extends DeclaredProcessor implements Processor<WebhookDelivery, void> {
  readonly mode = "ordered" as const;
  readonly concurrency = 1;
  private readonly deps: DelivererDeps;
  private readonly log: Logger;
  private stopping = false;

  constructor(deps: DelivererDeps) {
    super("webhook-retry");
    this.deps = deps;
    this.log = deps.log.child({ component: "webhook-retry" });
  }

  /** Called before the consume loops stop: a retry still waiting goes back to its topic instead of holding the stop. */
  prepareStop(): void {
    this.stopping = true;
  }

  createBatch(): void {}

  async handle(msg: Consumed<WebhookDelivery>): Promise<Emission[]> {
    const d = msg.value;
    for (let wait = d.notBefore - this.deps.clock.now(); wait > 0; wait = d.notBefore - this.deps.clock.now()) {
      if (this.stopping) return [toRetries(d)];
      await sleep(Math.min(wait, NAP_MS));
    }
    return deliver(this.deps, this.log, d);
  }
}
