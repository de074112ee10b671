// WARC_S3_URL: closed web archives copied to an S3-compatible bucket by the frontier role (in embedded mode, the one
// process), which knows when a job ended (its index is copied then). pipeline/store/warc/warc-uploader.ts does the work.
import { errorMessage } from "../pipeline/runtime/errors.ts";
import { S3ObjectStore } from "../pipeline/store/warc/s3-object-store.ts";
import { WarcUploader } from "../pipeline/store/warc/warc-uploader.ts";
import type { Config } from "../pipeline/runtime/config.ts";
import type { Logger } from "../pipeline/runtime/logger.ts";
import type { Infrastructure } from "./infrastructure.ts";

/** What the copy needs of a process's wiring (roles.ts' Wiring has it; named here so the two do not import each other). */
interface UploadWiring {
  config: Config;
  log: Logger;
  infra: Pick<Infrastructure, "warc" | "store">;
  closers: (() => Promise<void>)[];
}

/** Starts the copy when WARC_S3_URL is set (stopped with the process); the uploader, or null. */
export function startWarcUpload(w: UploadWiring): WarcUploader | null {
  const { infra, config, log } = w;
  if (!config.warcS3Url) return null;
  const objects = new S3ObjectStore(config);
  const uploader = new WarcUploader({
    archive: infra.warc,
    objects,
    prefix: objects.prefix,
    log,
    ended: async (jobId) => {
      const job = await infra.store.getCrawl(jobId);
      return job === null || job.status !== "scraping";
    },
  });
  log.info({ bucket: objects.bucket, prefix: objects.prefix, endpoint: config.warcS3Endpoint || "AWS", region: config.warcS3Region }, "web archives are copied to S3 (WARC_S3_URL)");
  uploader.start();
  w.closers.push(() => uploader.stop().catch((err: unknown) => log.warn({ err: errorMessage(err) }, "web archive upload: stop failed")));
  return uploader;
}
