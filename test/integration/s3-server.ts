// The local S3-compatible server that scripts/seaweedfs.sh runs (started by global-setup.ts): its address and test
// identity (the script's defaults and variables), an S3 client for it, a bucket per test, and a byte-for-byte copy
// of what the bucket holds under a prefix.
import { createHash, randomBytes } from "node:crypto";
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import type { Config } from "../../pipeline/runtime/config.ts";

export const S3_PORT = Number(process.env.TRAWL_S3_PORT ?? 18333);
export const S3_ENDPOINT = `http://127.0.0.1:${S3_PORT}`;
const ACCESS_KEY = process.env.TRAWL_S3_ACCESS_KEY ?? "trawl-test";
const SECRET_KEY = process.env.TRAWL_S3_SECRET_KEY ?? "trawl-test-secret";

/** Trawl's settings for a bucket of this server (endpoint: another address of it, e.g. a proxy). */
export function s3Config(bucket: string, prefix: string, endpoint = S3_ENDPOINT): Partial<Config> {
  return { warcS3Url: `s3://${bucket}/${prefix}`, warcS3Endpoint: endpoint, warcS3Region: "us-east-1", awsAccessKeyId: ACCESS_KEY, awsSecretAccessKey: SECRET_KEY };
}

export function s3Client(): S3Client {
  return new S3Client({ endpoint: S3_ENDPOINT, region: "us-east-1", forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });
}

/** A new bucket of its own for a test. */
export async function newBucket(client: S3Client): Promise<string> {
  const bucket = `trawl-warc-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

/** Every object under `prefix`: key (without the prefix) -> its bytes' SHA-256 and text. */
export async function objects(client: S3Client, bucket: string, prefix: string): Promise<Map<string, { sha256: string; bytes: Buffer }>> {
  const out = new Map<string, { sha256: string; bytes: Buffer }>();
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of page.Contents ?? []) {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }));
      const bytes = Buffer.from(await got.Body!.transformToByteArray());
      out.set(o.Key!.slice(prefix.length), { sha256: createHash("sha256").update(bytes).digest("hex"), bytes });
    }
    token = page.NextContinuationToken;
  } while (token);
  return out;
}
