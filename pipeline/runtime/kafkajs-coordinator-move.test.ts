import { describe, expect, it } from "vitest";
import { brokerUnreachable, followCoordinator, type ConsumerGroupLike } from "./kafkajs-coordinator-move.ts";
import kafkajs from "kafkajs";

const kafkaError = (type: string) => Object.assign(new Error(type), { type });

/** A group whose look-ups answer, in turn, the node ids given (the last one repeats); heartbeats go to `coordinator`. */
function group(answers: number[], sessionTimeout = 2000) {
  const lookups: number[] = [];
  const g: ConsumerGroupLike = {
    groupId: "g",
    sessionTimeout,
    coordinator: { nodeId: 1 },
    offsetManager: { coordinator: { nodeId: 1 } },
    cluster: {
      async findGroupCoordinator() {
        const nodeId = answers[Math.min(lookups.length, answers.length - 1)] ?? 1;
        lookups.push(nodeId);
        return { nodeId };
      },
    },
    heartbeat: async () => {},
  };
  return { g, lookups };
}

/** A heartbeat sender: broker 1 answers "not the coordinator", the others answer with the errors given, in turn. */
function sender(g: ConsumerGroupLike, elsewhere: (string | null)[] = [null]) {
  const sent: number[] = [];
  return {
    sent,
    send: async () => {
      const node = g.coordinator?.nodeId ?? -1;
      sent.push(node);
      if (node === 1) throw kafkaError("NOT_COORDINATOR_FOR_GROUP");
      const type = elsewhere.shift() ?? null;
      if (type) throw kafkaError(type);
    },
  };
}

describe("followCoordinator", () => {
  it("asks again while a broker still names the old coordinator, then sends the heartbeat to the new one", async () => {
    const { g, lookups } = group([1, 1, 3]);
    const { send, sent } = sender(g);
    await followCoordinator(g, send);
    expect(lookups).toEqual([1, 1, 3]);
    expect(sent).toEqual([1, 1, 1, 3]);
    // commits follow the heartbeats
    expect(g.offsetManager?.coordinator?.nodeId).toBe(3);
  });

  it("sends again while the new coordinator is still loading the group", async () => {
    const { g } = group([2]);
    const { send, sent } = sender(g, ["GROUP_LOAD_IN_PROGRESS", "GROUP_LOAD_IN_PROGRESS", null]);
    await followCoordinator(g, send);
    expect(sent).toEqual([1, 2, 2, 2]);
  });

  it("sends again while the new coordinator still answers that it is not the coordinator (it has not taken the group over)", async () => {
    // seen with three brokers: the new leader of the group's __consumer_offsets partition refused heartbeats for a moment
    const { g, lookups } = group([3]);
    const { send, sent } = sender(g, ["NOT_COORDINATOR_FOR_GROUP", "NOT_COORDINATOR_FOR_GROUP", null]);
    await followCoordinator(g, send);
    expect(sent).toEqual([1, 3, 3, 3]);
    expect(lookups).toEqual([3, 3, 3]);
  });

  it("sends again when its first answer came from the new coordinator, not yet in charge, which look-ups name", async () => {
    // kafkajs shares one heartbeat between its callers: a caller that joined the resent one got the new coordinator's
    // "not the correct coordinator" first, and gave up on it (the group then rejoined after its batch)
    const { g, lookups } = group([3]);
    g.coordinator = { nodeId: 3 };
    const { send, sent } = sender(g, ["NOT_COORDINATOR_FOR_GROUP", "NOT_COORDINATOR_FOR_GROUP", null]);
    await followCoordinator(g, send);
    expect(sent).toEqual([3, 3, 3]);
    expect(lookups).toEqual([3, 3]);
  });

  it("gives the last error to the caller when no other coordinator is found within the wait", async () => {
    const { g, lookups } = group([1], 2000);
    const { send, sent } = sender(g);
    const started = Date.now();
    await expect(followCoordinator(g, send)).rejects.toMatchObject({ type: "NOT_COORDINATOR_FOR_GROUP" });
    // a wait of half a session (at least 1 s), asking again meanwhile
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
    expect(lookups.length).toBeGreaterThan(2);
    expect(sent.length).toBeGreaterThanOrEqual(lookups.length);
  });

  it("passes any other error on at once", async () => {
    const { g, lookups } = group([2]);
    await expect(followCoordinator(g, async () => { throw kafkaError("REBALANCE_IN_PROGRESS"); })).rejects.toMatchObject({ type: "REBALANCE_IN_PROGRESS" });
    expect(lookups).toEqual([]);
  });
});

describe("brokerUnreachable", () => {
  it("sees a refused connection also behind kafkajs' own retries given up (flagged not retriable)", () => {
    const refused = new kafkajs.KafkaJSConnectionError("Connection error: connect ECONNREFUSED 127.0.0.1:9", { broker: "127.0.0.1:9" });
    const gaveUp = new kafkajs.KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 8, retryTime: 1000 });
    expect(gaveUp.retriable).toBe(false);
    expect(brokerUnreachable(gaveUp)).toBe(true);
    expect(brokerUnreachable(refused)).toBe(true);
    expect(brokerUnreachable(kafkaError("TOPIC_AUTHORIZATION_FAILED"))).toBe(false);
    expect(brokerUnreachable(new kafkajs.KafkaJSNumberOfRetriesExceeded(kafkaError("SASL_AUTHENTICATION_FAILED"), { retryCount: 1, retryTime: 1 }))).toBe(false);
  });
});
