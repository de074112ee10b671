// A classic consumer group shared with a member of Trawl's kafkajs releases (a rolling upgrade, or Kafka 3.9 where
// `auto` is classic): kafkajs offers its round robin as `RoundRobinAssigner` only, and a classic group needs one
// assignor name every member offers. Before CLASSIC_ASSIGNORS the broker refused the new member
// (INCONSISTENT_GROUP_PROTOCOL) for as long as the old one stayed, and it handled nothing. The old member is stood in
// for by a consumer offering only kafkajs' name.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Consumer, MessagesStream } from "@platformatic/kafka";
import { javaPartition } from "../../pipeline/runtime/java-partitioner.ts";
import { heldLanes, lanesKafka, until, type LanesKafka } from "./held-lanes.ts";

const lanes = heldLanes();
let k: LanesKafka;
let old: Consumer<Buffer, Buffer, Buffer, Buffer> | undefined;
let stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined;

beforeAll(async () => {
  k = await lanesKafka("classic", 2, "classic-assignors-test");
});
afterAll(async () => {
  await stream?.close().catch(() => undefined);
  await old?.close(true).catch(() => undefined);
  await k?.close(lanes);
});

it("a classic member shares its group with one offering only kafkajs' assignor name", async () => {
  const topic = `${k.config.topicPrefix}team.admission`;
  const kafkajsAssignor = { protocols: [{ name: "RoundRobinAssigner", version: 0 }] };
  old = k.kafka.consumer({ groupId: `${k.config.groupPrefix}mixed`, autocommit: false, ...kafkajsAssignor });
  stream = await old.consume({ topics: [topic], mode: "committed", fallbackMode: "earliest", autocommit: false });
  await until("the old member owns both partitions", () => (old?.assignments ?? []).reduce((n, a) => n + a.partitions.length, 0) === 2, 30_000);

  await k.start(lanes.processor("mixed", 10));
  const keys = ["team-1", "team-2", "team-3", "team-4", "team-5", "team-6"];
  const byPartition = [0, 1].map((p) => keys.find((key) => javaPartition(key, 2) === p) as string);
  await k.bus.produce(byPartition.map((key, p) => ({ topic: "team.admission", key, value: { type: "JobQueued" as const, teamId: "team-1", crawlId: `m${p}`, at: Date.now() } })));
  // round robin over two members: one partition each, so the new member handles the message of its own
  await until("the new member handling its partition", () => lanes.handled.length >= 1, 40_000);
  await until("the old member left with one partition", () => (old?.assignments ?? []).reduce((n, a) => n + a.partitions.length, 0) === 1, 20_000);
  expect(lanes.handled).toHaveLength(1);
}, 90_000);
