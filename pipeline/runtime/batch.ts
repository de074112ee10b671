// What every consume loop does with one batch of one partition: decode, validate, process, then produce the
// emissions (phase by phase, awaiting acks) around the processor's hooks. The loops (Kafka, embedded) only fetch
// batches and commit offsets after this resolved.
import { validator } from "../../schemas/index.ts";
import type { LogicalTopic } from "../topology.ts";
import { phaseGroups, phases, type Bus, type Consumed, type Emission, type Processor } from "./bus.ts";
import { classify, errorCode, errorMessage, TrawlError } from "./errors.ts";
import { deadLettered } from "./dead-letters.ts";
import type { Logger } from "./logger.ts";
import { backoffMs, sleep } from "./retry.ts";
import { turn } from "./yield-turn.ts";

/** A message as any bus hands it over. */
export interface RawMessage {
  key: string | null;
  value: string | null;
  offset: string;
}

export interface RunnerHandle {
  stop(): Promise<void>;
}

export interface Decoded<T> {
  ok: Consumed<T>[];
  deadLetters: Emission[];
  /**
   * Messages that are JSON but fail the schema and still name their page (string crawlId, urlKey and url): the page
   * fails for its crawl, which would otherwise wait forever for a URL whose message went to the dead-letter topic.
   */
  invalidPages: { msg: Consumed<T>; reason: string }[];
}

function deadLetter(topic: LogicalTopic, m: RawMessage, partition: number, code: string, reason: string): Emission {
  deadLettered(topic, code);
  return { topic, deadLetter: true, key: m.key ?? "", value: { code, reason, partition, offset: m.offset, key: m.key, value: m.value } };
}

export function decodeBatch<T>(topic: LogicalTopic, schema: Parameters<typeof validator>[0], partition: number, messages: RawMessage[]): Decoded<T> {
  const validate = validator<T>(schema);
  const out: Decoded<T> = { ok: [], deadLetters: [], invalidPages: [] };
  for (const m of messages) {
    let value: unknown;
    try {
      value = JSON.parse(m.value ?? "");
    } catch (err) {
      out.deadLetters.push(deadLetter(topic, m, partition, "MESSAGE_UNDECODABLE", errorMessage(err)));
      continue;
    }
    if (!validate(value)) {
      const reason = (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
      out.deadLetters.push(deadLetter(topic, m, partition, "MESSAGE_INVALID", reason));
      const named = value as { crawlId?: unknown; urlKey?: unknown; url?: unknown } | null;
      if (named && typeof named.crawlId === "string" && typeof named.urlKey === "string" && typeof named.url === "string") {
        out.invalidPages.push({ msg: { topic, partition, offset: m.offset, key: m.key ?? "", value: value as T }, reason });
      }
      continue;
    }
    out.ok.push({ topic, partition, offset: m.offset, key: m.key ?? "", value: value as T });
  }
  return out;
}

/**
 * Runs tasks with at most `limit` in flight, starting them in index order. Once `stop` is aborted no new task
 * starts; the tasks that did start (always a prefix of `items`) finish. Returns the results of that prefix.
 */
export async function mapPool<A, B>(items: A[], limit: number, fn: (a: A) => Promise<B>, stop?: AbortSignal): Promise<B[]> {
  const results: B[] = [];
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length && !stop?.aborted) {
      await turn(); // sockets and timers get their turn between slices of a backlog (yield-turn.ts)
      if (next >= items.length || stop?.aborted) break;
      const i = next++;
      results[i] = await fn(items[i] as A);
    }
  });
  await Promise.all(workers);
  return results.slice(0, next);
}

/**
 * Handles a batch; resolves with how many of its first messages are done (the caller commits that far). Once
 * `abandon` is aborted (the group took the partition away) no further message starts, as when stopping.
 */
export type BatchHandler = (partition: number, messages: RawMessage[], abandon?: AbortSignal) => Promise<number>;

/** Runs `fn` until it passes; retriable failures back off and try again until the stop (then it throws). */
export function retryForever(log: Logger, stopping: AbortSignal): (fn: () => Promise<void>, what: string) => Promise<void> {
  return async (fn, what) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (classify(err) !== "retry" || stopping.aborted) throw err;
        const delay = backoffMs(attempt, 200, 10000);
        log.warn({ err: errorMessage(err), code: errorCode(err), attempt, delayMs: delay }, `${what} failed, backing off`);
        await sleep(delay, stopping);
      }
    }
  };
}

/**
 * One message through `processor.handle`; retriable failures are retried (with backoff) until they pass or the stop,
 * page failures become the processor's emissions, anything else is dead-lettered.
 */
export function messageHandler<T, B>(processor: Processor<T, B>, log: Logger, stopping: AbortSignal): (msg: Consumed<T>, scratch: B) => Promise<Emission[]> {
  return async (msg, scratch) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await processor.handle(msg, scratch);
      } catch (err) {
        const disposition = classify(err);
        const ctx = { partition: msg.partition, offset: msg.offset, key: msg.key, attempt, code: errorCode(err) };
        if (disposition === "page-failed" && processor.onPageFailure) {
          log.info({ ...ctx, err: errorMessage(err) }, "page failed");
          return processor.onPageFailure(msg, err);
        }
        if (disposition === "retry" && !stopping.aborted) {
          const delay = backoffMs(attempt, 200, 10000);
          log.warn({ ...ctx, err: errorMessage(err), delayMs: delay }, "retriable failure, backing off");
          await sleep(delay, stopping);
          if (!stopping.aborted) continue;
        }
        if (disposition === "retry") throw err; // stopping: leave the offset uncommitted
        log.error({ ...ctx, err }, "message dead-lettered");
        deadLettered(processor.topic, errorCode(err));
        // the URL still fails for its crawl, so that no crawl waits forever for a dead-lettered page
        const failure = processor.onPageFailure?.(msg, err) ?? [];
        return [
          ...failure,
          {
            topic: processor.topic,
            deadLetter: true,
            key: msg.key,
            value: { code: errorCode(err), reason: errorMessage(err), partition: msg.partition, offset: msg.offset, message: msg.value },
          },
        ];
      }
    }
  };
}

/** A batch's emissions, phase by phase, around the processor's hooks (beforeProduce, afterPhase, afterProduce). */
export async function produceWithHooks<T, B>(processor: Processor<T, B>, bus: Bus, scratch: B, emissions: Emission[]): Promise<void> {
  await processor.beforeProduce?.(scratch);
  const groups = phaseGroups(emissions);
  if (processor.afterPhase && !groups.some((g) => g.phase === 0)) groups.unshift({ phase: 0, emissions: [] });
  for (const g of groups) {
    await bus.produce(g.emissions);
    await processor.afterPhase?.(scratch, g.phase);
  }
  await processor.afterProduce?.(scratch);
}

/** The dead letters and page failures of messages that could not be decoded or failed their schema. */
export function undecodedEmissions<T>(processor: Processor<T, unknown>, log: Logger, partition: number, decoded: Decoded<T>): Emission[] {
  for (const d of decoded.deadLetters) log.error({ partition, ...(d.value as object) }, "undecodable message dead-lettered");
  const emissions: Emission[] = [...decoded.deadLetters];
  for (const { msg, reason } of decoded.invalidPages) {
    emissions.push(...(processor.onPageFailure?.(msg, new TrawlError("MESSAGE_INVALID", `the page's message does not match its schema: ${reason}`)) ?? []));
  }
  return emissions;
}

/**
 * The batch step of a processor. Resolves when the side effects of the batch's first N messages are acknowledged
 * (N < length only when stopping or abandoned: the rest is redelivered); rejects only while stopping.
 */
export function batchHandler<T, B>(processor: Processor<T, B>, bus: Bus, log: Logger, stopping: AbortSignal): BatchHandler {
  const retryForeverIn = retryForever(log, stopping);
  const handleOne = messageHandler(processor, log, stopping);

  return async (partition, messages, abandon) => {
    const halt = abandon ? AbortSignal.any([stopping, abandon]) : stopping;
    const wanted = processor.skip ? messages.filter((m) => !processor.skip?.(m.key, m.value)) : messages;
    const decoded = decodeBatch<T>(processor.topic, processor.schema, partition, wanted);
    const ok = decoded.ok;
    const emissions = undecodedEmissions(processor as Processor<T, unknown>, log, partition, decoded);
    const scratch = processor.createBatch();
    if (processor.prepare) await retryForeverIn(() => processor.prepare?.(ok, scratch) ?? Promise.resolve(), "prepare");
    const deliver = (list: Emission[]) =>
      retryForeverIn(async () => {
        for (const phase of phases(list)) await bus.produce(phase);
      }, "delivery");
    // messages started, always a prefix of `ok` (all of them unless stopping)
    let started: number;
    if (processor.mode === "parallel" && !processor.beforeProduce && !processor.afterProduce && !processor.afterPhase) {
      // stateless stages pass each message on as soon as it is done (the batch's slowest page holds nobody up);
      // the offset still moves only when the whole batch is delivered. Nothing of a delivered message is kept: a
      // fetch.tasks batch is thousands of tasks, and holding each one's emissions (the fetched page) until the last
      // was done grew the heap by the pages of a whole batch (a cluster crawl of 40,000 pages: 250 -> 510 MB)
      await deliver(emissions);
      // (a started message leaves `ok`; the first one not started stays, for the offset below)
      const open = ok as (Consumed<T> | undefined)[];
      const done = await mapPool(ok.map((_, i) => i), processor.concurrency, async (i) => {
        const m = open[i] as Consumed<T>;
        open[i] = undefined;
        await deliver(await handleOne(m, scratch));
      }, halt);
      started = done.length;
    } else {
      const results = await mapPool(ok, processor.mode === "ordered" ? 1 : processor.concurrency, (m) => handleOne(m, scratch), halt);
      started = results.length;
      for (const list of results) emissions.push(...list);
      await retryForeverIn(() => produceWithHooks(processor, bus, scratch, emissions), "delivery");
    }
    if (started === ok.length) return messages.length;
    // stopped part-way: done up to (not including) the first message that was not started
    const firstUndone = ok[started]?.offset;
    return messages.findIndex((m) => m.offset === firstUndone);
  };
}
