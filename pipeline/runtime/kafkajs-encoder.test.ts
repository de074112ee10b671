import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);

/** In a process of its own (require's cache is shared by every test file of a worker): a produce request kafkajs
 * encodes (records of every size around the Encoder's growth steps, a record batch, the request around it), its
 * bytes as hex, and whether the pooled Encoder was installed. `patch`: load kafkajs-encoder.ts first. */
function encodeRequest(patch: boolean): { installed: boolean | null; pooled: boolean; hex: string } {
  const script = `
    import { createRequire } from "node:module";
    // fresh memory is mostly zeros: fill what allocUnsafe hands out, so that a read past an Encoder's offset shows
    const allocUnsafe = Buffer.allocUnsafe;
    Buffer.allocUnsafe = (n) => allocUnsafe(n).fill(0xaa);
    const installed = ${patch} ? (await import(${JSON.stringify(require.resolve("./kafkajs-encoder.ts"))})).pooledEncoderInstalled : null;
    const require = createRequire(${JSON.stringify(import.meta.url)});
    const Encoder = require("kafkajs/src/protocol/encoder.js");
    const { RecordBatch } = require("kafkajs/src/protocol/recordBatch/v0/index.js");
    const Record = require("kafkajs/src/protocol/recordBatch/record/v0/index.js");
    const produce = require("kafkajs/src/protocol/requests/produce/v3/request.js");
    const sizes = [0, 1, 200, 511, 512, 513, 4095, 4096, 70000, 300000];
    const records = sizes.map((n, i) => Record({ offsetDelta: i, key: "k" + i, value: "é✓".repeat(n) + i, headers: { h: "v" + i } }));
    const batch = await RecordBatch({ records, lastOffsetDelta: records.length - 1, firstTimestamp: 1, maxTimestamp: 2 });
    const encoder = new Encoder();
    encoder.writeInt32(7).writeString("topic").writeBytes(batch.buffer).writeVarIntString("x".repeat(600)).writeEncoder(batch);
    const request = await produce({ acks: -1, timeout: 30000, topicData: [{ topic: "t", partitions: [{ partition: 0, firstSequence: 0, messages: records.map((r, i) => ({ key: "k" + i, value: "v".repeat(sizes[i]), timestamp: 1000 + i })) }] }] }).encode();
    const pooled = new Encoder().buf.buffer.byteLength > 512; // a slice of Node's pool, not a buffer of its own
    console.log(JSON.stringify({ installed, pooled, hex: Buffer.concat([encoder.buffer, request.buffer]).toString("hex") }));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out.trim().split("\n").pop() as string) as { installed: boolean | null; pooled: boolean; hex: string };
}

describe("kafkajs' Encoder without zero-filled buffers", () => {
  it("encodes a produce request to the same bytes as kafkajs' own Encoder, and is installed when loaded first", () => {
    const own = encodeRequest(false);
    const pooled = encodeRequest(true);
    expect(own.installed).toBe(null);
    expect(own.pooled).toBe(false);
    expect(pooled.installed).toBe(true);
    expect(pooled.pooled).toBe(true);
    expect(pooled.hex.length).toBeGreaterThan(2 * 700_000);
    expect(pooled.hex === own.hex).toBe(true);
  });
});
