// Keyed mode (runtime/lanes.ts) on a real broker: a held lane holds only itself, the committed offset waits for the
// oldest message not done, and a rebalance while a message is held loses nothing (what was not committed is delivered
// again to the partition's new owner).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { heldLanes, lanesKafka, until, type LanesKafka } from "./held-lanes.ts";

// the classic protocol takes the partition away from the first member when the second joins (eager rebalance); the
// consumer protocol (KIP-848) leaves it where it is, and nothing of it stops
describe.each(["classic", "consumer"] as const)("keyed mode on Kafka (%s group protocol)", (protocol) => {
  const lanes = heldLanes();
  const { handled, held, hold, processor } = lanes;
  const keyed = (group: string) => processor(group, 100);
  let k: LanesKafka;
  const send = (ids: string[]) => k.bus.produce(ids.map((crawlId) => ({ topic: "team.admission", key: "team-1", value: { type: "JobQueued", teamId: "team-1", crawlId, at: Date.now() } })));
  const committed = async (group: string) => (await k.committed(group, [0]))[0] as number;

  beforeAll(async () => {
    k = await lanesKafka(protocol, 1, "lanes-test");
  });
  afterAll(async () => {
    await k?.close(lanes);
  });

  it("a held message holds only its lane; the offset waits for it; a rebalance meanwhile loses nothing", async () => {
    await k.start(keyed("lanes"));
    hold.add("a1");
    await send(["a1", "b1", "b2", "a2", "c1"]);
    await until("the other lanes", () => ["b1", "b2", "c1"].every((id) => handled.includes(id)));
    expect(handled).not.toContain("a2");
    await new Promise((r) => setTimeout(r, 300));
    expect(await committed("lanes")).toBeLessThanOrEqual(0); // a1 (offset 0) is not done

    // a second member joins. Classic: the partition is fetched again from its commit by whichever member owns it; the
    // held a1 of the first generation finishes but commits nothing. Consumer protocol: the partition stays with the
    // first member, whose lanes go on
    hold.clear();
    await k.start(keyed("lanes"));
    if (protocol === "classic") {
      // the rebalance happened: b1, done but not committed, is delivered again
      await until("the redelivery after the rebalance", () => handled.filter((id) => id === "b1").length >= 2, 30_000);
    } else {
      await new Promise((r) => setTimeout(r, 6000)); // a few of the broker's heartbeat intervals (5 s)
      expect(handled.filter((id) => id === "b1")).toHaveLength(1);
    }
    held.get("a1")?.();
    await until("every message committed", async () => (await committed("lanes")) === 5, 30_000);
    for (const id of ["a1", "b1", "b2", "a2", "c1"]) expect(handled, id).toContain(id);
    // lane a in order wherever it ran: each a2 after an a1
    expect(handled.indexOf("a1")).toBeLessThan(handled.lastIndexOf("a2"));
  });
});
