// Marker files beside a job's WARC files, the state of their copy to S3 (WARC_S3_URL), kept on the same volume so
// that it survives a restart and is seen by every replica:
// - `<name>.warc.gz.closed` (empty): the file is complete, no writer extends it any more (written by the writer when
//   it closes the file, or by the repair of a file a killed writer left);
// - `<name>.warc.gz.s3` (JSON): the file is in the bucket (its URL, size and SHA-256);
// - `index.cdxj.s3` (JSON): the job's merged index is in the bucket, covering these files;
// - `<name>.lease` (exclusive, `<host> <pid>`): one uploader is copying it; a lease untouched for LEASE_STALE_MS, or
//   whose process of this machine is gone (a kill), is taken over.
// A closed file without `.s3` is an upload still to do.
import { open, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";

export const CLOSED = ".closed";
export const UPLOADED = ".s3";
export const INDEX_NAME = "index.cdxj";
/** A lease not renewed for this long belongs to an uploader that is gone (renewed every LEASE_RENEW_MS). */
export const LEASE_STALE_MS = 10 * 60_000;
export const LEASE_RENEW_MS = 60_000;

export interface Uploaded {
  url: string;
  sha256: string;
  bytes: number;
  at: number;
  /** index.cdxj only: the WARC files the index covered */
  files?: string[];
}

export async function markClosed(file: string): Promise<void> {
  await writeFile(`${file}${CLOSED}`, "");
}

export async function isClosed(file: string): Promise<boolean> {
  return (await stat(`${file}${CLOSED}`).catch(() => null)) !== null;
}

/** What `<path>.s3` says, or null (not uploaded, or a marker torn by a kill: uploaded again, which is harmless). */
export async function uploaded(path: string): Promise<Uploaded | null> {
  try {
    return JSON.parse(await readFile(`${path}${UPLOADED}`, "utf8")) as Uploaded;
  } catch {
    return null;
  }
}

export async function markUploaded(path: string, info: Uploaded): Promise<void> {
  const tmp = `${path}${UPLOADED}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(info));
  await rename(tmp, `${path}${UPLOADED}`);
}

/** Takes the lease of `path` (null: another live uploader holds it); the lease's release function otherwise. */
export async function takeLease(path: string, now = Date.now()): Promise<{ renew(): Promise<void>; release(): Promise<void> } | null> {
  const lease = `${path}.lease`;
  for (let tries = 0; tries < 2; tries++) {
    try {
      const handle = await open(lease, "wx");
      await handle.writeFile(`${hostname()} ${process.pid}`);
      await handle.close();
      return {
        renew: async () => {
          const t = new Date();
          await utimes(lease, t, t).catch(() => undefined);
        },
        release: () => rm(lease, { force: true }),
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const st = await stat(lease).catch(() => null);
      const [host, pid] = (await readFile(lease, "utf8").catch(() => "")).split(" ");
      const gone = host === hostname() && Number(pid) > 0 && Number(pid) !== process.pid && !alive(Number(pid));
      if (st && now - st.mtimeMs < LEASE_STALE_MS && !gone) return null;
      await rm(lease, { force: true }); // stale: its uploader is gone
    }
  }
  return null;
}

/** Whether a process of this machine runs (EPERM: it does, as another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
