// Torn tails: a process killed while it appended to a WARC file leaves a partial gzip member at its end (and maybe a
// partial line in its CDXJ sidecar). The sidecar's last `#end <bytes>` line is the file's length up to its last
// whole append (written after the records and their index lines), so the file is cut to it and the sidecar to that
// line: every index line then points at a whole record, and the records of the interrupted append, whose fetch task
// was not acknowledged, are written again when the task is delivered again. Only files no writer can extend any more
// are cut: untouched for longer than a writer keeps a file open (WARC_IDLE_CLOSE_MS), or any file at the start of the
// embedded mode, where no other process writes. Such a file is then marked closed (warc-markers.ts), as a file its
// writer closed.
import { readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isClosed, markClosed } from "./warc-markers.ts";

export interface CutTail {
  file: string;
  fromBytes: number;
  toBytes: number;
}

/** The committed length of a sidecar's text and the text up to it (null: no `#end` line). */
export function committed(sidecar: string): { bytes: number; text: string } | null {
  const at = sidecar.lastIndexOf("#end ");
  if (at < 0 || (at > 0 && sidecar[at - 1] !== "\n")) return null;
  const eol = sidecar.indexOf("\n", at);
  if (eol < 0) return committed(sidecar.slice(0, at)); // the #end line itself is torn: the one before counts
  const bytes = Number(sidecar.slice(at + 5, eol));
  return Number.isSafeInteger(bytes) ? { bytes, text: sidecar.slice(0, eol + 1) } : null;
}

/**
 * Cuts the torn tails of the files under `root` that no writer extends any more: last written before `before` (epoch
 * ms), or `dead(name)` (written by a process of this machine that is gone).
 */
export async function cutTornTails(root: string, before: number, dead: (name: string) => boolean = () => false): Promise<CutTail[]> {
  const cut: CutTail[] = [];
  for (const crawl of await readdir(root).catch(() => [] as string[])) {
    const dir = join(root, crawl);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (!name.endsWith(".warc.gz")) continue;
      const file = join(dir, name);
      const st = await stat(file).catch(() => null);
      if (!st || (st.mtimeMs >= before && !dead(name))) continue;
      const sidecarPath = `${file}.cdxj`;
      const sidecar = await readFile(sidecarPath, "utf8").catch(() => "");
      const end = committed(sidecar);
      if (!end || end.bytes === 0) {
        // killed before its warcinfo was committed: nothing of it is indexed
        await rm(file, { force: true });
        await rm(sidecarPath, { force: true });
        cut.push({ file, fromBytes: st.size, toBytes: 0 });
        continue;
      }
      if (st.size > end.bytes) {
        await truncate(file, end.bytes);
        cut.push({ file, fromBytes: st.size, toBytes: end.bytes });
      }
      if (sidecar.length > end.text.length) await writeFile(sidecarPath, end.text);
      // no writer extends it any more: complete as it is now (the S3 upload copies it)
      if (!(await isClosed(file))) await markClosed(file);
    }
  }
  return cut;
}
