import { describe, expect, it } from "vitest";
import { compatibilityPartitioner, defaultPartitioner } from "@platformatic/kafka";
import { javaPartitioner } from "./kafka-bus.ts";
import { javaPartition } from "./java-partitioner.ts";

describe("javaPartitioner (the producer's)", () => {
  const keys = Array.from({ length: 2000 }, (_, i) => `crawl-${i.toString(36)}-${"é".repeat(i % 3)}`);

  it("gives, after the client's modulo by the partition count, the Java client's partition of every key", () => {
    for (const n of [1, 2, 3, 6, 12, 16, 50]) {
      for (const key of keys) expect(javaPartitioner(undefined, Buffer.from(key)) % n).toBe(javaPartition(key, n));
    }
  });

  it("is not the client's default partitioner, which differs for some keys (murmur2 >>> 0)", () => {
    const differ = keys.filter((key) => (defaultPartitioner(undefined as never, Buffer.from(key)) % 3) !== javaPartition(key, 3));
    expect(differ.length).toBeGreaterThan(0);
    // the client's compatibilityPartitioner agrees with it
    for (const key of keys) expect(compatibilityPartitioner(undefined as never, Buffer.from(key)) % 12).toBe(javaPartition(key, 12));
  });
});
