import { randomBytes } from "node:crypto";
import { zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ownBuffer, ZSTD_SYNC_MAX_BYTES, zstdCodec } from "./kafka-compression.ts";

// Page-like input that compresses the way HTML does, of any size.
function pages(bytes: number): Buffer {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const part = `<div class="sect1"><h2 id="s${i}">Section ${i}</h2><p>${randomBytes(24).toString("hex")} text of section ${i}</p></div>\n`;
    parts.push(part);
    n += part.length;
  }
  return Buffer.from(parts.join("")).subarray(0, bytes);
}

describe("the zstd codec for kafkajs", () => {
  // both sides of ZSTD_SYNC_MAX_BYTES: a small batch (on the event loop) and one past the limit (on the thread pool)
  for (const size of [300, 48 * 1024, ZSTD_SYNC_MAX_BYTES + 4096]) {
    it(`round-trips a ${size}-byte batch, in zstd frames any reader decodes`, async () => {
      const input = pages(size);
      const compressed = await zstdCodec.compress({ buffer: input });
      expect(compressed.length).toBeLessThan(input.length);
      expect(zstdDecompressSync(compressed).equals(input)).toBe(true);
      expect((await zstdCodec.decompress(compressed)).equals(input)).toBe(true);
      expect((await zstdCodec.decompress(zstdCompressSync(input))).equals(input)).toBe(true);
    });
  }

  it("does not keep zlib's 64 KB output chunk alive for each small decoded batch", async () => {
    // 40 batches of 3-12 KB (a page or two each): kept as views of their chunks they held 40 × 64 KB
    const inputs = Array.from({ length: 40 }, (_, i) => pages(3000 + i * 230));
    const outs = await Promise.all(inputs.map((input) => zstdCodec.decompress(zstdCompressSync(input))));
    outs.forEach((out, i) => expect(out.equals(inputs[i] as Buffer)).toBe(true));
    const held = [...new Set(outs.map((o) => o.buffer))].reduce((n, b) => n + b.byteLength, 0);
    expect(held).toBeLessThanOrEqual(8 * 64 * 1024);
    const large = await zstdCodec.decompress(zstdCompressSync(pages(3 * ZSTD_SYNC_MAX_BYTES)));
    expect(large.buffer.byteLength).toBeLessThanOrEqual(2 * large.length);
  });

  it("rejects a corrupt batch instead of throwing where kafkajs does not catch", async () => {
    const corrupt = Buffer.from(zstdCompressSync(pages(10_000)));
    corrupt.fill(0x55, 4, 40);
    let result: Promise<Buffer> | undefined;
    expect(() => { result = zstdCodec.decompress(corrupt); }).not.toThrow();
    await expect(result).rejects.toThrow();
    const large = Buffer.from(zstdCompressSync(pages(4 * ZSTD_SYNC_MAX_BYTES)));
    large.fill(0x55, 4, 40);
    await expect(zstdCodec.decompress(large)).rejects.toThrow();
  });

  it("copies only a result much smaller than what holds it", () => {
    const chunk = Buffer.alloc(64 * 1024, 7);
    const small = ownBuffer(chunk.subarray(0, 5000));
    expect(small.buffer).not.toBe(chunk.buffer);
    expect(small.equals(chunk.subarray(0, 5000))).toBe(true);
    expect(ownBuffer(chunk.subarray(0, 60_000)).buffer).toBe(chunk.buffer);
    expect(ownBuffer(chunk).buffer).toBe(chunk.buffer);
  });
});
