// The Bus port: what processors emit and what the runner hands them. Adapters: Kafka (kafka-bus.ts).
import type { LogicalTopic } from "../topology.ts";
import type { SchemaName } from "../../schemas/index.ts";

export interface Emission {
  topic: LogicalTopic;
  key: string;
  value: unknown;
  /** Emissions of a later phase are produced only after every earlier phase was acknowledged. */
  phase?: number;
  /** Send to the topic's dead-letter twin. */
  deadLetter?: boolean;
  /**
   * `value`'s JSON text, when the emitter has it already (`jsonWith`): the bus writes it instead of serializing `value`
   * again. A topic whose values the schema registry encodes still encodes (and validates) `value`.
   */
  json?: string;
}

/**
 * The JSON text of `{ ...obj, [key]: JSON.parse(rawJson) }` without serializing that value again: for a message that
 * embeds a document its emitter already turned into JSON (the sink's page event carries the document it stores).
 */
export function jsonWith(obj: Record<string, unknown>, key: string, rawJson: string): string {
  const head = JSON.stringify(obj);
  return `${head.slice(0, -1)}${head === "{}" ? "" : ","}${JSON.stringify(key)}:${rawJson}}`;
}

export interface Bus {
  /** Resolves once the broker acknowledged every message (acks=all). */
  produce(messages: Emission[]): Promise<void>;
  close(): Promise<void>;
}

export interface Consumed<T> {
  topic: LogicalTopic;
  partition: number;
  offset: string;
  key: string;
  value: T;
}

/** A stage as the runner sees it: a pure-ish core behind a handle function. */
export interface Processor<T, B = void> {
  name: string;
  topic: LogicalTopic;
  schema: SchemaName;
  /** Consumer group id, without the configured prefix (declared in pipeline/topology.ts). */
  group: string;
  /**
   * ordered: one message at a time per partition, in offset order; parallel: up to `concurrency` of a batch at once;
   * keyed: messages in order per lane (`lane`), each lane's queue as one batch, lanes independent, up to `concurrency`
   * messages of a partition not done at once; the offset moves over the done prefix (lanes.ts).
   */
  mode: "ordered" | "parallel" | "keyed";
  concurrency: number;
  /** keyed mode: the lane of a message (default: its key). */
  lane?(msg: Consumed<T>): string;
  /**
   * Every process gets every message (its own consumer group, starting at the end of the topic), instead of the
   * processes sharing the partitions. For API replicas that fan events out to their WebSocket clients.
   */
  broadcast: boolean;
  /** Its topic is empty most of the time: fetched without waiting for bytes, polled less often when idle (Kafka only). */
  sparse?: boolean;
  /**
   * A message this processor has no use for, told from its key and JSON text before any decoding: not decoded, not
   * handled, committed with its batch. Must never skip a message it would act on.
   */
  skip?(key: string | null, text: string | null): boolean;
  /** Per-batch scratch space (pending writes of this batch only; partitions, and lanes in keyed mode, run concurrently). */
  createBatch(): B;
  /** Called once per batch before any handle, with every decoded message (e.g. one store read for the batch). */
  prepare?(messages: Consumed<T>[], batch: B): Promise<void>;
  handle(msg: Consumed<T>, batch: B): Promise<Emission[]>;
  /** A page-level failure of `msg` (an Error classified "page-failed") turned into emissions. */
  onPageFailure?(msg: Consumed<T>, err: unknown): Emission[];
  /** Side effects that must be durable before the batch's emissions are produced (idempotent: clears what it wrote). */
  beforeProduce?(batch: B): Promise<void>;
  /** Side effects that follow the acknowledged emissions of one phase (and precede the next phase). */
  afterPhase?(batch: B, phase: number): Promise<void>;
  /** Side effects that follow the acknowledged emissions and precede the offset commit. */
  afterProduce?(batch: B): Promise<void>;
  /**
   * The partitions of `topic` this process owns after a rebalance (Kafka only). State cached in memory for any other
   * partition must be dropped: another process may have changed it meanwhile.
   */
  onPartitionsAssigned?(partitions: number[]): void;
}

/** Groups emissions by phase, in ascending order, with each group's phase number. */
export function phaseGroups(emissions: Emission[]): { phase: number; emissions: Emission[] }[] {
  const byPhase = new Map<number, Emission[]>();
  for (const e of emissions) {
    const p = e.phase ?? 0;
    const list = byPhase.get(p) ?? [];
    list.push(e);
    byPhase.set(p, list);
  }
  return [...byPhase.keys()].sort((a, b) => a - b).map((p) => ({ phase: p, emissions: byPhase.get(p) ?? [] }));
}

/** Groups emissions by phase, in ascending order. */
export function phases(emissions: Emission[]): Emission[][] {
  return phaseGroups(emissions).map((g) => g.emissions);
}

/** One consumer group's position on one topic, for the queue admin page. */
export interface QueueStat {
  topic: string;
  group: string;
  /** messages ever produced to the topic (sum of the partitions' end offsets) */
  produced: number;
  /** messages not yet committed by the group */
  lag: number;
  /** the lag of each partition (the /metrics gauge trawl_consumer_lag) */
  partitions?: { partition: number; lag: number }[];
}

export interface QueueStats {
  queueStats(): Promise<QueueStat[]>;
}
