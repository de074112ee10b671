// What every consume loop does with one batch of one partition: decode, validate, process, then produce the
// emissions (phase by phase, awaiting acks) around the processor's hooks. The loops (Kafka, embedded) only fetch
// batches and commit offsets after this resolved.
import { validator } from "../../schemas/index.ts";
import type { LogicalTopic } from "../topology.ts";
import { phases, type Bus, type Consumed, type Emission, type Processor } from "./bus.ts";
import { classify, errorCode, errorMessage } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { backoffMs, sleep } from "./retry.ts";

/** A message as any bus hands it over. */
export interface RawMessage {
  key: string | null;
  value: string | null;
  offset: string;
}

export interface RunnerHandle {
  stop(): Promise<void>;
}

interface Decoded<T> {
  ok: Consumed<T>[];
  deadLetters: Emission[];
}

function deadLetter(topic: LogicalTopic, m: RawMessage, partition: number, code: string, reason: string): Emission {
  return { topic, deadLetter: true, key: m.key ?? "", value: { code, reason, partition, offset: m.offset, key: m.key, value: m.value } };
}

export function decodeBatch<T>(topic: LogicalTopic, schema: Parameters<typeof validator>[0], partition: number, messages: RawMessage[]): Decoded<T> {
  const validate = validator<T>(schema);
  const out: Decoded<T> = { ok: [], deadLetters: [] };
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
      continue;
    }
    out.ok.push({ topic, partition, offset: m.offset, key: m.key ?? "", value: value as T });
  }
  return out;
}

/** Runs tasks with at most `limit` in flight. */
export async function mapPool<A, B>(items: A[], limit: number, fn: (a: A) => Promise<B>): Promise<B[]> {
  const results: B[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as A);
    }
  });
  await Promise.all(workers);
  return results;
}

export type BatchHandler = (partition: number, messages: RawMessage[]) => Promise<void>;

/**
 * The batch step of a processor. Resolves when the batch's side effects are acknowledged (the caller then commits);
 * rejects only while stopping (the offsets stay uncommitted and the batch is redelivered).
 */
export function batchHandler<T, B>(processor: Processor<T, B>, bus: Bus, log: Logger, stopping: AbortSignal): BatchHandler {
  async function retryForever(fn: () => Promise<void>, what: string): Promise<void> {
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
  }

  /** One message; retriable failures are retried here (with backoff) until they pass or we stop. */
  async function handleOne(msg: Consumed<T>, scratch: B): Promise<Emission[]> {
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
  }

  return async (partition, messages) => {
    const { ok, deadLetters } = decodeBatch<T>(processor.topic, processor.schema, partition, messages);
    for (const d of deadLetters) log.error({ partition, ...(d.value as object) }, "undecodable message dead-lettered");
    const emissions: Emission[] = [...deadLetters];
    const scratch = processor.createBatch();
    if (processor.prepare) await retryForever(() => processor.prepare?.(ok, scratch) ?? Promise.resolve(), "prepare");
    if (processor.mode === "ordered") {
      for (const msg of ok) emissions.push(...(await handleOne(msg, scratch)));
    } else {
      for (const list of await mapPool(ok, processor.concurrency, (m) => handleOne(m, scratch))) emissions.push(...list);
    }
    await retryForever(async () => {
      await processor.beforeProduce?.(scratch);
      for (const phase of phases(emissions)) await bus.produce(phase);
      await processor.afterProduce?.(scratch);
    }, "delivery");
  };
}
