import { Readable } from "node:stream";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { InflateTooLargeError, inflateCapped } from "./inflate.ts";

const text = Buffer.from("hello, world ".repeat(1000));

describe("inflateCapped", () => {
  it("undoes gzip, deflate (zlib and raw), br and stacked codings, from a buffer or a stream", async () => {
    const cases: [string, Buffer][] = [["gzip", gzipSync(text)], ["x-gzip", gzipSync(text)], ["deflate", deflateSync(text)], ["deflate", deflateRawSync(text)], ["br", brotliCompressSync(text)], ["gzip, br", brotliCompressSync(gzipSync(text))]];
    for (const [encoding, bytes] of cases) {
      expect((await inflateCapped(bytes, encoding, 1e6)).equals(text), encoding).toBe(true);
      const chunks = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7));
      expect((await inflateCapped(Readable.from(chunks), encoding, 1e6)).equals(text), `${encoding} streamed`).toBe(true);
    }
  });

  it("stops at the cap on the inflated size", async () => {
    const bomb = gzipSync(Buffer.alloc(64 << 20));
    expect(bomb.length).toBeLessThan(100_000);
    await expect(inflateCapped(bomb, "gzip", 1 << 20)).rejects.toBeInstanceOf(InflateTooLargeError);
    await expect(inflateCapped(gzipSync(text), "gzip", text.length - 1)).rejects.toBeInstanceOf(InflateTooLargeError);
    expect((await inflateCapped(gzipSync(text), "gzip", text.length)).length).toBe(text.length);
  });

  it("rejects corrupt data with zlib's code", async () => {
    await expect(inflateCapped(Buffer.from("not gzip at all"), "gzip", 1e6)).rejects.toMatchObject({ code: "Z_DATA_ERROR" });
  });
});
