// One webhook attempt: the signed POST, bounded by WEBHOOK_TIMEOUT_MS, skipped while its endpoint is suspended
// (endpoint-breaker.ts), logged in the delivery log, and turned into the next attempt (on webhook.retries) when it
// failed and may be retried. Destinations on private addresses are refused (unless ALLOW_LOCAL_WEBHOOKS) and never
// retried.
import { request, type Agent } from "undici";
import type { WebhookDelivery } from "../../schemas/index.ts";
import type { Emission } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Metrics } from "../runtime/metrics.ts";
import type { Logger } from "../runtime/logger.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { PRIVATE_ADDRESS_REFUSED, refusedLiteral } from "../net/guarded-agent.ts";
import { keys } from "../topology.ts";
import type { EndpointBreaker } from "./endpoint-breaker.ts";
import type { EndpointSlots } from "./endpoints.ts";
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
  /** attempts by result (ok, retry, failed) */
  metrics?: Metrics;
  /** Suspends an endpoint that keeps failing (shared by every webhook consumer of one process). */
  breaker: EndpointBreaker;
  /** Attempts in flight per endpoint (shared by every webhook consumer of one process). */
  slots: EndpointSlots;
  /** Aborted when the process begins to stop: nothing waits any longer (for a slot, or a retry's time). */
  stopping: AbortSignal;
}

interface Outcome {
  ok: boolean;
  retriable: boolean;
  status: number;
  error: string;
}

export const toRetries = (d: WebhookDelivery): Emission => ({ topic: "webhook.retries", key: keys.crawlEvent(d.crawlId, d.eventId), value: d });

/** One attempt of a delivery to `endpoint`, logged; the next attempt (on webhook.retries) when it failed and may be retried. */
export async function deliver(deps: DelivererDeps, log: Logger, d: WebhookDelivery, endpoint: string): Promise<Emission[]> {
  const outcome = await attempt(deps, d, endpoint);
  await deps.store.logDeliveries([{ crawlId: d.crawlId, eventId: d.eventId, event: d.event, url: d.url, statusCode: outcome.status, attempt: d.attempt, error: outcome.error, at: deps.clock.now() }]);
  const ctx = { crawlId: d.crawlId, event: d.event, endpoint, attempt: d.attempt, status: outcome.status };
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

async function attempt(deps: DelivererDeps, d: WebhookDelivery, endpoint: string): Promise<Outcome> {
  const now = deps.clock.now();
  const until = deps.breaker.suspendedUntil(endpoint, now);
  if (until > 0) return { ok: false, retriable: true, status: 0, error: `not attempted: the endpoint failed several times in a row and is suspended for ${until - now} ms more` };
  const outcome = await httpAttempt(deps, d);
  if (outcome.ok || outcome.retriable) deps.breaker.record(endpoint, outcome.ok, deps.clock.now());
  return outcome;
}

async function httpAttempt(deps: DelivererDeps, d: WebhookDelivery): Promise<Outcome> {
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
