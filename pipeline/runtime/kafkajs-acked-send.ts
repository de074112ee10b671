// kafkajs 2.2.4 (its last release) can resolve a send without having sent some of its records (kafkajs#1303, open):
// a produce request goes to each partition's leader; when one broker answers "not the leader" and the partition's new
// leader is a broker that already acknowledged other partitions of the same send, the retry skips that broker (it
// "has answered"), the partition's records are never sent, and `sendBatch` resolves without an error. Reproduced on
// three brokers after moving one partition's leader onto another's (test/integration/kafka-three-brokers.test.ts:
// 10 + 10 records sent, 10 stored). Checked here in Trawl's code: a send resolves only when the result acknowledges
// every partition its records were given to (the partitioner records the partition of each message); the records of a
// partition missing from the result are sent again (a new send: it goes to the partition's current leader), a bounded
// number of times, and a send that still misses one fails (the caller retries; nothing is committed meanwhile).
import { Partitioners, type ICustomPartitioner, type Message, type Producer, type ProducerBatch, type RecordMetadata, type TopicMessages } from "kafkajs";

/** The partition the producer's partitioner gave each message object (kafkajs passes our objects through). */
export type ChosenPartitions = WeakMap<Message, number>;

/** kafkajs' default partitioner (murmur2 of the key, as the Java client), recording its choice per message. */
export function recordingPartitioner(chosen: ChosenPartitions): ICustomPartitioner {
  return () => {
    const partition = Partitioners.DefaultPartitioner();
    return (args) => {
      const p = partition(args);
      chosen.set(args.message, p);
      return p;
    };
  };
}

export class UnacknowledgedRecordsError extends Error {
  readonly missing: { topic: string; partitions: number[]; records: number }[];
  constructor(missing: TopicMessages[], chosen: ChosenPartitions, rounds: number) {
    const detail = missing.map((t) => ({ topic: t.topic, partitions: [...new Set(t.messages.map((m) => chosen.get(m) ?? -1))], records: t.messages.length }));
    super(`kafka did not acknowledge ${detail.reduce((n, d) => n + d.records, 0)} record(s) after ${rounds} sends (${detail.map((d) => `${d.topic} [${d.partitions.join(",")}]`).join("; ")})`);
    this.name = "UnacknowledgedRecordsError";
    this.missing = detail;
  }
}

/** The records of `sent` whose partition the result does not acknowledge (with no error). */
export function unacknowledged(sent: TopicMessages[], result: RecordMetadata[], chosen: ChosenPartitions): TopicMessages[] {
  const acked = new Set(result.filter((r) => r.errorCode === 0).map((r) => `${r.topicName}\u0000${r.partition}`));
  return sent
    .map(({ topic, messages }) => ({ topic, messages: messages.filter((m) => !acked.has(`${topic}\u0000${chosen.get(m) ?? -1}`)) }))
    .filter((t) => t.messages.length > 0);
}

/**
 * `producer.sendBatch`, resolved only once every record's partition acknowledged it: what a send left out is sent again,
 * up to `rounds` sends in all. The producer must have been created with `recordingPartitioner(chosen)`.
 */
export async function sendBatchAcknowledged(
  producer: Producer,
  batch: ProducerBatch,
  chosen: ChosenPartitions,
  opts: { rounds?: number; onResend?: (missing: TopicMessages[]) => void } = {},
): Promise<RecordMetadata[]> {
  const rounds = opts.rounds ?? 5;
  const acknowledged: RecordMetadata[] = [];
  let pending = batch.topicMessages ?? [];
  for (let round = 1; ; round++) {
    const result = await producer.sendBatch({ ...batch, topicMessages: pending });
    acknowledged.push(...result);
    const missing = unacknowledged(pending, result, chosen);
    if (missing.length === 0) return acknowledged;
    if (round >= rounds) throw new UnacknowledgedRecordsError(missing, chosen, round);
    opts.onResend?.(missing);
    pending = missing;
  }
}
