// Keyed mode (runtime/lanes.ts) under the consumer group protocol (KIP-848) on a real broker: a member joins and takes
// one of the first member's two partitions. The partition the first member keeps must go on where it was: a message
// its lanes had done past the committed offset (behind one still held) is not handled again. Before, every rebalance
// reset every partition's lanes, and a fetch-render replica joining a crawl fetched hundreds of pages twice
// (bench/replica-churn.ts). The partition that moves is handled again from its committed offset by its new owner
// (at-least-once), as before.
import { afterAll, beforeAll, expect, it } from "vitest";
import { javaPartition } from "../../pipeline/runtime/java-partitioner.ts";
import { heldLanes, lanesKafka, until, type LanesKafka } from "./held-lanes.ts";

const lanes = heldLanes();
const { handled, held, hold, processor } = lanes;
let k: LanesKafka;
const committed = () => k.committed("kept", [0, 1]);
const times = (id: string) => handled.filter((h) => h === id).length;

beforeAll(async () => {
  k = await lanesKafka("consumer", 2, "lanes-kept-test");
});
afterAll(async () => {
  await k?.close(lanes);
});

it("a partition kept through an incremental rebalance does not handle again what its lanes had done", async () => {
  const keys = ["team-1", "team-2", "team-3", "team-4", "team-5", "team-6"];
  const byPartition = [0, 1].map((p) => keys.find((k) => javaPartition(k, 2) === p) as string);
  await k.start(processor("kept", 100));
  // on each partition: x<p> (lane x) is held, y<p> (lane y) behind it is done, but the committed offset waits for x<p>
  hold.add("x0");
  hold.add("x1");
  await k.bus.produce(byPartition.flatMap((key, p) => [`x${p}`, `y${p}`].map((crawlId) => ({ topic: "team.admission", key, value: { type: "JobQueued" as const, teamId: "team-1", crawlId, at: Date.now() } }))));
  await until("x0 and x1 held, y0 and y1 done", () => held.has("x0") && held.has("x1") && times("y0") === 1 && times("y1") === 1);
  expect((await committed()).every((o) => o <= 0)).toBe(true); // nothing past x<p> (-1: nothing committed yet)

  // a second member joins: one partition moves to it (and is handled there from offset 0), the other stays
  hold.clear();
  await k.start(processor("kept", 100));
  await until("the moved partition handled by the new member", () => times("y0") + times("y1") >= 3, 40_000);
  // time for the first member to act on its new assignment (before, it reset the kept partition and ran y again)
  await new Promise((r) => setTimeout(r, 2000));
  for (const release of held.values()) release();
  await until("every message committed", async () => (await committed()).every((o) => o === 2), 40_000);
  await new Promise((r) => setTimeout(r, 500));
  expect([times("y0"), times("y1")].sort()).toEqual([1, 2]);
}, 90_000);
