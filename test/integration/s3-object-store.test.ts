// The S3 adapter of the web-archive copy (pipeline/store/warc/s3-object-store.ts) against the real SeaweedFS of
// scripts/seaweedfs.sh: a file above the multipart threshold (8 MB parts) and a small one are stored byte for byte, with
// their SHA-256 in the object's metadata; putting the same key again (a copy made twice) leaves the same object; a
// server that does not answer fails the put (the uploader retries it).
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { S3ObjectStore } from "../../pipeline/store/warc/s3-object-store.ts";
import { newBucket, objects, s3Client, s3Config } from "./s3-server.ts";

const client = s3Client();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "s3-store-"));
});
afterAll(async () => {
  client.destroy();
  await rm(dir, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("S3ObjectStore on SeaweedFS", () => {
  it("stores a multipart-sized file and a small one byte for byte, again under the same key without harm", async () => {
    const bucket = await newBucket(client);
    const store = new S3ObjectStore(loadConfig({}, s3Config(bucket, "lake/warc")));
    expect([store.bucket, store.prefix]).toEqual([bucket, "lake/warc"]);
    const big = randomBytes(19 * 1024 * 1024 + 123); // three parts of 8 MB
    const small = randomBytes(5000);
    await writeFile(join(dir, "big.warc.gz"), big);
    await writeFile(join(dir, "small.warc.gz"), small);
    const signal = new AbortController().signal;
    for (let i = 0; i < 2; i++) {
      await store.putFile("lake/warc/j/big.warc.gz", join(dir, "big.warc.gz"), { bytes: big.length, sha256: sha(big), contentType: "application/warc" }, signal);
      await store.putFile("lake/warc/j/small.warc.gz", join(dir, "small.warc.gz"), { bytes: small.length, sha256: sha(small), contentType: "application/warc" }, signal);
      await store.putBytes("lake/warc/j/index.cdxj", Buffer.from("a 1 {}\n"), "text/x-cdxj; charset=utf-8", signal);
    }
    const held = await objects(client, bucket, "lake/warc/j/");
    expect([...held.keys()].sort()).toEqual(["big.warc.gz", "index.cdxj", "small.warc.gz"]);
    expect(held.get("big.warc.gz")?.sha256).toBe(sha(big));
    expect(held.get("small.warc.gz")?.sha256).toBe(sha(small));
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: "lake/warc/j/big.warc.gz" }));
    expect(head.Metadata?.sha256).toBe(sha(big));
    expect(store.url("lake/warc/j/big.warc.gz")).toBe(`s3://${bucket}/lake/warc/j/big.warc.gz`);
    store.close();
  }, 120_000);

  it("a server that does not answer fails the put", async () => {
    const store = new S3ObjectStore(loadConfig({}, s3Config("nowhere", "", "http://127.0.0.1:1")));
    await writeFile(join(dir, "x.warc.gz"), "x");
    await expect(store.putFile("x.warc.gz", join(dir, "x.warc.gz"), { bytes: 1, sha256: sha(Buffer.from("x")), contentType: "application/warc" }, new AbortController().signal)).rejects.toThrow();
    store.close();
  });
});
