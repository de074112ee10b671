import { describe, expect, it } from "vitest";
import type { Message, RecordMetadata } from "kafkajs";
import { unacknowledged, UnacknowledgedRecordsError, type ChosenPartitions } from "./kafkajs-acked-send.ts";

const ack = (topicName: string, partition: number, errorCode = 0): RecordMetadata => ({ topicName, partition, errorCode });

describe("records a send left unacknowledged (kafkajs#1303)", () => {
  const chosen: ChosenPartitions = new WeakMap();
  const m = (key: string, partition: number | undefined): Message => {
    const msg = { key, value: key };
    if (partition !== undefined) chosen.set(msg, partition);
    return msg;
  };
  const a0 = m("a0", 0), a1 = m("a1", 1), b0 = m("b0", 0), never = m("never", undefined);

  it("keeps the records of the partitions the result does not acknowledge, in their order", () => {
    const sent = [{ topic: "a", messages: [a0, a1] }, { topic: "b", messages: [b0] }];
    expect(unacknowledged(sent, [ack("a", 0), ack("b", 0)], chosen)).toEqual([{ topic: "a", messages: [a1] }]);
    expect(unacknowledged(sent, [ack("a", 0), ack("a", 1), ack("b", 0)], chosen)).toEqual([]);
  });

  it("counts a partition answered with an error, and a record never partitioned, as unacknowledged", () => {
    expect(unacknowledged([{ topic: "a", messages: [a0, a1] }], [ack("a", 0, 6), ack("a", 1)], chosen)).toEqual([{ topic: "a", messages: [a0] }]);
    expect(unacknowledged([{ topic: "a", messages: [never] }], [ack("a", 0)], chosen)).toEqual([{ topic: "a", messages: [never] }]);
  });

  it("names the topic, partitions and count of what stayed unacknowledged", () => {
    expect(new UnacknowledgedRecordsError([{ topic: "a", messages: [a1] }], chosen, 5).message).toBe("kafka did not acknowledge 1 record(s) after 5 sends (a [1])");
  });
});
