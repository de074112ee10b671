// Keyed mode (runtime/lanes.ts) under the consumer group protocol (KIP-848) on a real broker: a rebalance that moves
// one partition away drops that partition's lanes only (the kept one goes on where it was: kafka-lanes-kept.test.ts).
// Every message of both partitions must still be handled once the held ones are released: the moved partition's from
// its committed offset by its new owner, the kept one's by its lanes, including the batch that waited for room (the
// fetch position must not move past messages no lane ran: they would be neither handled nor delivered again).
import { afterAll, beforeAll, expect, it } from "vitest";
import { javaPartition } from "../../pipeline/runtime/java-partitioner.ts";
import { heldLanes, lanesKafka, until, type LanesKafka } from "./held-lanes.ts";

const lanes = heldLanes();
const { handled, held, hold, processor } = lanes;
// two lanes' worth of room per partition: the first message holds its lane, the second waits behind it, the third
// waits for room
const keyed = (group: string) => processor(group, 2);
let k: LanesKafka;
const committed = () => k.committed("lanes", [0, 1]);

beforeAll(async () => {
  k = await lanesKafka("consumer", 2, "lanes-rebalance-test");
});
afterAll(async () => {
  await k?.close(lanes);
});

it("a partition kept through a rebalance loses none of the messages its reset lanes had queued", async () => {
  const keys = ["team-1", "team-2", "team-3", "team-4", "team-5", "team-6"];
  const key0 = keys.find((k) => javaPartition(k, 2) === 0) as string;
  const key1 = keys.find((k) => javaPartition(k, 2) === 1) as string;
  const ids: Record<string, string[]> = { [key0]: ["a1", "a2", "a3"], [key1]: ["c1", "c2", "c3"] };
  await k.start(keyed("lanes"));
  hold.add("a1");
  hold.add("c1");
  await k.bus.produce(Object.entries(ids).flatMap(([key, list]) => list.map((crawlId) => ({ topic: "team.admission", key, value: { type: "JobQueued" as const, teamId: "team-1", crawlId, at: Date.now() } }))));
  await until("both held messages running", () => held.has("a1") && held.has("c1"));
  await new Promise((r) => setTimeout(r, 300));
  expect(handled).toEqual([]);

  // a second member joins: one partition moves to it, the other stays with the first member and keeps its lanes
  hold.clear();
  await k.start(keyed("lanes"));
  // the held messages finish (the moved partition's commits nothing); the kept partition's lanes go on behind them
  await new Promise((r) => setTimeout(r, 2000));
  for (const release of held.values()) release();
  await until("every message committed", async () => (await committed()).every((o) => o === 3), 40_000);
  // a2 and c2 waited behind a held message, a3 and c3 for room
  for (const id of ["a2", "c2", "a1", "c1", "a3", "c3"]) expect(handled, id).toContain(id);
}, 60_000);
