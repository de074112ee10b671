// The bucket of WARC_S3_URL through the AWS SDK (@aws-sdk/client-s3, the field's standard client; it speaks to AWS S3
// and to S3-compatible servers: SeaweedFS, MinIO, Ceph, the clouds' S3 APIs). Files go through lib-storage's Upload:
// one PutObject up to PART_BYTES, a multipart upload above (parts of PART_BYTES, two at a time), so a 1 GB WARC file
// is neither read into memory nor sent in one request; after it a HeadObject checks the stored size.
import { createReadStream } from "node:fs";
import { HeadObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { Config } from "../../runtime/config.ts";

/** Where archives are copied: put is idempotent (the same key again replaces the object with the same bytes). */
export interface ObjectStore {
  putFile(key: string, path: string, meta: { bytes: number; sha256: string; contentType: string }, signal: AbortSignal): Promise<void>;
  putBytes(key: string, body: Buffer, contentType: string, signal: AbortSignal): Promise<void>;
  /** `s3://<bucket>/<key>` */
  url(key: string): string;
  close(): void;
}

const PART_BYTES = 8 * 1024 * 1024;

/** `s3://bucket/a/b` -> bucket and key prefix (`a/b`; "" for none). The config has validated it. */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  if (!m) throw new Error(`not an s3:// URL: ${url}`);
  return { bucket: m[1]!, prefix: m[2]!.replace(/\/+$/, "") };
}

export type S3Settings = Pick<Config, "warcS3Url" | "warcS3Endpoint" | "warcS3Region" | "warcS3ForcePathStyle" | "awsAccessKeyId" | "awsSecretAccessKey">;

export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;

  constructor(config: S3Settings) {
    const { bucket, prefix } = parseS3Url(config.warcS3Url);
    this.bucket = bucket;
    this.prefix = prefix;
    const pathStyle = config.warcS3ForcePathStyle === "auto" ? config.warcS3Endpoint !== "" : config.warcS3ForcePathStyle === "true";
    this.client = new S3Client({
      region: config.warcS3Region,
      ...(config.warcS3Endpoint ? { endpoint: config.warcS3Endpoint } : {}),
      forcePathStyle: pathStyle,
      ...(config.awsAccessKeyId ? { credentials: { accessKeyId: config.awsAccessKeyId, secretAccessKey: config.awsSecretAccessKey } } : {}),
      // the uploader retries with its own backoff (and after a restart): one SDK retry for a dropped connection
      maxAttempts: 2,
      // checksums only where S3 requires them: several S3-compatible servers refuse the SDK's default CRC32 trailers;
      // the size is checked after the upload and the SHA-256 travels in the object's metadata
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
    });
  }

  url(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  async putFile(key: string, path: string, meta: { bytes: number; sha256: string; contentType: string }, signal: AbortSignal): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: createReadStream(path), ContentType: meta.contentType, Metadata: { sha256: meta.sha256 } },
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
    });
    const abort = () => void upload.abort();
    signal.addEventListener("abort", abort, { once: true });
    try {
      await upload.done();
    } finally {
      signal.removeEventListener("abort", abort);
    }
    const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal });
    if (head.ContentLength !== meta.bytes) throw new Error(`s3://${this.bucket}/${key} holds ${head.ContentLength} bytes after the upload, not ${meta.bytes}`);
  }

  async putBytes(key: string, body: Buffer, contentType: string, signal: AbortSignal): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.length }), { abortSignal: signal });
  }

  close(): void {
    this.client.destroy();
  }
}
