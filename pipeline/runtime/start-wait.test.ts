import { describe, expect, it } from "vitest";
import { TrawlError } from "./errors.ts";
import { createLogger } from "./logger.ts";
import { StartDeadline, withoutCredentials } from "./start-wait.ts";

const what = { server: "Kafka", variable: "KAFKA_BROKERS", where: "k1:9092" };
const opts = { retries: 20, initialMs: 5, maxMs: 20, retriable: (err: unknown) => !(err instanceof TypeError) };
const log = createLogger("silent");

describe("a start's bounded wait for its servers", () => {
  it("returns what the call gives once the server answers", async () => {
    let calls = 0;
    const got = await new StartDeadline(5_000, log).run(what, async () => {
      if (++calls < 3) throw new Error("connect ECONNREFUSED");
      return "up";
    }, opts);
    expect([got, calls]).toEqual(["up", 3]);
  });

  it("stops at the deadline with INFRA_UNREACHABLE naming the variable and the last error, also beyond opts.retries", async () => {
    const started = Date.now();
    let calls = 0;
    const err = await new StartDeadline(300, log).run(what, async () => {
      calls++;
      throw new Error("connect ECONNREFUSED 10.0.0.1:9092");
    }, { ...opts, retries: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TrawlError);
    expect((err as TrawlError).code).toBe("INFRA_UNREACHABLE");
    expect((err as TrawlError).message).toContain("could not reach Kafka at KAFKA_BROKERS=k1:9092 within INFRA_START_WAIT_S=0 s (last error: connect ECONNREFUSED 10.0.0.1:9092)");
    expect(calls).toBeGreaterThan(2);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("does not wait for an attempt that hangs past the deadline", async () => {
    const err = await new StartDeadline(200, log).run(what, () => new Promise<never>(() => {}), opts).catch((e: unknown) => e);
    expect((err as TrawlError).code).toBe("INFRA_UNREACHABLE");
    expect((err as TrawlError).message).toContain("(last error: no answer yet)");
  });

  it("passes an error that waiting cannot cure through at once", async () => {
    const bad = new TypeError("bad certificate");
    await expect(new StartDeadline(5_000, log).run(what, () => Promise.reject(bad), opts)).rejects.toBe(bad);
  });

  it("never prints a URL's user and password", () => {
    expect(withoutCredentials("https://u:secret@registry.test:8081/apis")).toBe("https://registry.test:8081/apis");
    expect(withoutCredentials("k1:9092,k2:9092")).toBe("k1:9092,k2:9092");
  });
});
