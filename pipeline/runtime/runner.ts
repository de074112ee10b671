// The one consume loop. For every batch: decode, validate, process, produce (awaiting acks, phase by phase),
// then commit. Offsets move only after the side effects they cover were acknowledged. Nothing else commits.
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from "kafkajs";
import { validator } from "../../schemas/index.ts";
import { physicalTopic, type LogicalTopic } from "../topology.ts";
import { phases, type Bus, type Consumed, type Emission, type Processor } from "./bus.ts";
import type { Config } from "./config.ts";
import { classify, errorCode, errorMessage } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { backoffMs, sleep } from "./retry.ts";
import { MAX_MESSAGE_BYTES } from "./kafka-bus.ts";

export interface RunnerHandle {
  stop(): Promise<void>;
}

interface Decoded<T> {
  ok: Consumed<T>[];
  deadLetters: Emission[];
}

function deadLetter(topic: LogicalTopic, m: KafkaMessage, partition: number, code: string, reason: string): Emission {
  return {
    topic,
    deadLetter: true,
    key: m.key?.toString() ?? "",
    value: { code, reason, partition, offset: m.offset, key: m.key?.toString() ?? null, value: m.value?.toString() ?? null },
  };
}

export function decodeBatch<T>(topic: LogicalTopic, schema: Parameters<typeof validator>[0], partition: number, messages: KafkaMessage[]): Decoded<T> {
  const validate = validator<T>(schema);
  const out: Decoded<T> = { ok: [], deadLetters: [] };
  for (const m of messages) {
    let value: unknown;
    try {
      value = JSON.parse(m.value?.toString() ?? "");
    } catch (err) {
      out.deadLetters.push(deadLetter(topic, m, partition, "MESSAGE_UNDECODABLE", errorMessage(err)));
      continue;
    }
    if (!validate(value)) {
      const reason = (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
      out.deadLetters.push(deadLetter(topic, m, partition, "MESSAGE_INVALID", reason));
      continue;
    }
    out.ok.push({ topic, partition, offset: m.offset, key: m.key?.toString() ?? "", value: value as T });
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

export async function startRunner<T, B>(
  deps: { kafka: Kafka; bus: Bus; config: Config; log: Logger },
  processor: Processor<T, B>,
): Promise<RunnerHandle> {
  const { kafka, bus, config } = deps;
  const log = deps.log.child({ component: processor.name, topic: processor.topic });
  const topic = physicalTopic(config.topicPrefix, processor.topic);
  const stopping = new AbortController();
  const consumer: Consumer = kafka.consumer({
    groupId: `${config.groupPrefix}${processor.name}`,
    sessionTimeout: 60000,
    heartbeatInterval: 3000,
    maxBytesPerPartition: MAX_MESSAGE_BYTES,
    maxBytes: 4 * MAX_MESSAGE_BYTES,
    allowAutoTopicCreation: false,
  });

  /** Handles one message; retriable failures are retried here (with backoff) until they pass or we stop. */
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
        if (disposition === "retry" && !stopping.signal.aborted) {
          const delay = backoffMs(attempt, 200, 10000);
          log.warn({ ...ctx, err: errorMessage(err), delayMs: delay }, "retriable failure, backing off");
          await sleep(delay, stopping.signal);
          if (!stopping.signal.aborted) continue;
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

  /** Produces the batch's emissions phase by phase, with its hooks; retried until done (the hooks are idempotent). */
  function deliver(emissions: Emission[], scratch: B): Promise<void> {
    return retryForever(async () => {
      await processor.beforeProduce?.(scratch);
      for (const phase of phases(emissions)) await bus.produce(phase);
      await processor.afterProduce?.(scratch);
    }, "delivery");
  }

  async function retryForever(fn: () => Promise<void>, what: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (classify(err) !== "retry" || stopping.signal.aborted) throw err;
        const delay = backoffMs(attempt, 200, 10000);
        log.warn({ err: errorMessage(err), code: errorCode(err), attempt, delayMs: delay }, `${what} failed, backing off`);
        await sleep(delay, stopping.signal);
      }
    }
  }

  async function eachBatch({ batch, heartbeat, isRunning, isStale, resolveOffset }: EachBatchPayload): Promise<void> {
    if (batch.messages.length === 0) return;
    const started = Date.now();
    const beat = setInterval(() => heartbeat().catch((err) => log.debug({ err: errorMessage(err) }, "heartbeat failed")), 3000);
    try {
      const { ok, deadLetters } = decodeBatch<T>(processor.topic, processor.schema, batch.partition, batch.messages);
      for (const d of deadLetters) log.error({ partition: batch.partition, ...(d.value as object) }, "undecodable message dead-lettered");
      const emissions: Emission[] = [...deadLetters];
      const scratch = processor.createBatch();
      if (processor.prepare) await retryForever(() => processor.prepare?.(ok, scratch) ?? Promise.resolve(), "prepare");
      if (processor.mode === "ordered") {
        for (const msg of ok) emissions.push(...(await handleOne(msg, scratch)));
      } else {
        for (const list of await mapPool(ok, processor.concurrency, (m) => handleOne(m, scratch))) emissions.push(...list);
      }
      await deliver(emissions, scratch);
      if (!isRunning() || isStale()) {
        log.warn({ partition: batch.partition }, "batch finished after a rebalance; not committing");
        return;
      }
      const next = (BigInt(batch.lastOffset()) + 1n).toString();
      resolveOffset(batch.lastOffset()); // moves the fetch position
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
      log.debug({ partition: batch.partition, messages: batch.messages.length, ms: Date.now() - started, offset: next }, "batch committed");
    } finally {
      clearInterval(beat);
    }
  }

  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: processor.mode === "ordered" ? 4 : 2,
    eachBatch,
  });
  log.info({ group: `${config.groupPrefix}${processor.name}` }, "consumer running");

  return {
    async stop() {
      stopping.abort();
      await consumer.disconnect(); // waits for the batch in flight
      log.info("consumer stopped");
    },
  };
}
