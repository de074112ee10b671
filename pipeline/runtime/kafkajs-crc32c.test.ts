import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
// kafkajs' own byte-at-a-time function (the file the patch replaces in require's cache, not the cache entry)
const kafkajsCrc = require("kafkajs/src/protocol/recordBatch/crc32C/crc32C.js") as (b: Buffer) => number;
const { crc32c } = await import("./kafkajs-crc32c.ts");

describe("CRC-32C for kafkajs' record batches", () => {
  it("is the standard check value and kafkajs' own result on every length around the 8-byte steps", () => {
    expect(crc32c(Buffer.from("123456789"))).toBe(0xe3069283);
    const data = randomBytes(4096);
    for (let n = 0; n <= 70; n++) expect(crc32c(data.subarray(3, 3 + n))).toBe(kafkajsCrc(data.subarray(3, 3 + n)));
    for (const n of [1000, 4096 - 5]) expect(crc32c(data.subarray(5, 5 + n))).toBe(kafkajsCrc(data.subarray(5, 5 + n)));
    const big = randomBytes(1 << 20);
    expect(crc32c(big)).toBe(kafkajsCrc(big));
  });

  it("is what kafkajs' record batch encoder uses once the module loaded, and the batch's CRC field is right", () => {
    // a process of its own: require's cache is shared by every test file of a worker
    const script = `
      import { createRequire } from "node:module";
      const { crc32c, crc32cInstalled } = await import(${JSON.stringify(require.resolve("./kafkajs-crc32c.ts"))});
      const require = createRequire(${JSON.stringify(import.meta.url)});
      const { RecordBatch } = require("kafkajs/src/protocol/recordBatch/v0/index.js");
      const Record = require("kafkajs/src/protocol/recordBatch/record/v0/index.js");
      const own = require("kafkajs/src/protocol/recordBatch/crc32C/crc32C.js");
      const records = [0, 1, 2].map((i) => Record({ offsetDelta: i, key: "k" + i, value: "<p>page " + i + "</p>".repeat(50) }));
      const batch = (await RecordBatch({ records, lastOffsetDelta: 2 })).buffer;
      // int64 firstOffset, int32 length, int32 partitionLeaderEpoch, int8 magic, then the CRC of what follows it
      const field = batch.readUInt32BE(17);
      console.log(JSON.stringify({ installed: crc32cInstalled, ours: require("kafkajs/src/protocol/recordBatch/crc32C/index.js") === crc32c, right: field === own(batch.subarray(21)) }));
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(out.trim().split("\n").pop() as string)).toEqual({ installed: true, ours: true, right: true });
  });
});
