import { describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { CoordinatorUnreachableError, heartbeatError } from "./kafkajs-coordinator-loss.ts";

const require = createRequire(import.meta.url);
const { KafkaJSConnectionError, KafkaJSConnectionClosedError, KafkaJSBrokerNotFound, KafkaJSProtocolError } = require("kafkajs") as Record<string, new (...args: unknown[]) => Error>;
const { isRebalancing } = require("kafkajs/src/errors.js") as { isRebalancing: (e: unknown) => boolean };

describe("heartbeatError", () => {
  it("turns a coordinator that cannot be reached into the error kafkajs rejoins on", () => {
    for (const err of [new KafkaJSConnectionError!("Connection error: connect ECONNREFUSED 127.0.0.1:19092"), new KafkaJSConnectionClosedError!("Closed connection", { host: "h", port: 1 }), new KafkaJSBrokerNotFound!("Broker 1 not found in the cached metadata")]) {
      const out = heartbeatError(err);
      expect(out).toBeInstanceOf(CoordinatorUnreachableError);
      expect(isRebalancing(out)).toBe(true);
      expect((out as Error).cause).toBe(err);
    }
  });

  it("leaves the broker's own answers as they are", () => {
    const err = new KafkaJSProtocolError!({ message: "The group is rebalancing", type: "REBALANCE_IN_PROGRESS", code: 27, retriable: false });
    expect(heartbeatError(err)).toBe(err);
    const bug = new TypeError("x");
    expect(heartbeatError(bug)).toBe(bug);
  });
});
