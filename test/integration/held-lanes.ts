// A keyed-mode processor for the runner's lane tests (kafka-lanes*.test.ts): lane = a message's first letter; a message
// whose crawl id is in `hold` waits until the test releases it (`held`); `handled` lists what ran, in order. And the
// Kafka those tests run it on: a topic prefix of their own, commits at once, the group protocol they name.
import { randomBytes } from "node:crypto";
import type { TeamAdmissionMessage } from "../../schemas/types.ts";
import type { Consumed, Processor } from "../../pipeline/runtime/bus.ts";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { createKafka, ensureTopics, KafkaBus, type KafkaClients } from "../../pipeline/runtime/kafka-bus.ts";
import { committedOffsets } from "../../pipeline/runtime/kafka-admin.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { startRunner, type RunnerHandle } from "../../pipeline/runtime/runner.ts";

/** Polls `cond` every `everyMs` until it holds; throws naming `what` after `ms`. */
export async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000, everyMs = 50): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface HeldLanes {
  /** Messages (crawl ids) handled, by whichever runner. */
  handled: string[];
  /** The release of each message being held. */
  held: Map<string, () => void>;
  /** Crawl ids to hold when they come. */
  hold: Set<string>;
  processor(group: string, concurrency: number): Processor<TeamAdmissionMessage>;
}

export function heldLanes(): HeldLanes {
  const handled: string[] = [];
  const held = new Map<string, () => void>();
  const hold = new Set<string>();
  return {
    handled, held, hold,
    processor: (group, concurrency) => ({
      name: group, topic: "team.admission", schema: "team-admission", group, mode: "keyed", concurrency, broadcast: false, sparse: true,
      lane: (m: Consumed<TeamAdmissionMessage>) => m.value.crawlId.slice(0, 1),
      createBatch() {},
      async handle(m: Consumed<TeamAdmissionMessage>) {
        const id = m.value.crawlId;
        if (hold.has(id)) await new Promise<void>((resolve) => held.set(id, resolve));
        handled.push(id);
        return [];
      },
    }),
  };
}

export interface LanesKafka {
  config: Config;
  kafka: KafkaClients;
  bus: KafkaBus;
  /** Starts one more member of the processor's group. */
  start(processor: Processor<TeamAdmissionMessage>): Promise<void>;
  /** The group's committed offset of each of `partitions` of team.admission (-1: none). */
  committed(group: string, partitions: number[]): Promise<number[]>;
  /** Releases what is held, stops every member started, closes the bus. */
  close(lanes: HeldLanes): Promise<void>;
}

export async function lanesKafka(protocol: "classic" | "consumer", topicPartitions: number, clientId: string): Promise<LanesKafka> {
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const log = createLogger("error");
  const config = loadConfig({ ...process.env, KAFKA_COMMIT_INTERVAL_MS: "0", KAFKA_GROUP_PROTOCOL: protocol }, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions });
  const kafka = createKafka(config, clientId, log);
  await ensureTopics(kafka, config, log);
  const bus = new KafkaBus(kafka, config.topicPrefix);
  const runners: RunnerHandle[] = [];
  return {
    config, kafka, bus,
    start: async (processor) => {
      runners.push(await startRunner({ kafka, bus, config, log }, processor));
    },
    committed: async (group, partitions) => {
      const admin = kafka.admin();
      try {
        const offsets = await committedOffsets(admin, `${tag}.${group}`, `${tag}.team.admission`, partitions);
        return partitions.map((p) => Number(offsets.get(p) ?? -1));
      } finally {
        await admin.close();
      }
    },
    close: async (lanes) => {
      for (const release of lanes.held.values()) release();
      await Promise.all(runners.map((r) => r.stop()));
      await bus.close();
    },
  };
}
