import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import "./kafkajs-request-queue.ts";

const require = createRequire(import.meta.url);
const RequestQueue = require("kafkajs/src/network/requestQueue/index.js");
const noLog = { debug() {}, info() {}, warn() {}, error() {} };

describe("kafkajs request queue (patched)", () => {
  const queues: { destroy(): void }[] = [];
  const queue = () => {
    const q = new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 30_000, clientId: "test", broker: "b:1", logger: noLog });
    queues.push(q);
    return q;
  };
  afterEach(() => queues.splice(0).forEach((q) => q.destroy()));

  it("schedules no check when nothing is pending and nothing throttles (kafkajs re-armed a 1 ms timer forever)", () => {
    const q = queue();
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it("still checks later while requests wait, or until a throttle ends", () => {
    const waiting = queue();
    waiting.pending.push({});
    waiting.inflight.set(1, {}); // the in-flight limit holds the pending request back
    waiting.checkPendingRequests();
    expect(waiting.throttleCheckTimeoutId).not.toBeNull();
    const throttled = queue();
    throttled.maybeThrottle(500);
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
  });
});
