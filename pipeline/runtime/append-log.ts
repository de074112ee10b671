// An append-only JSON-lines file: writes are serialised in call order; each resolves once its lines are written.
// Framing: a record is one line of JSON, and it is complete exactly when its newline is on disk (JSON text never
// holds a raw newline, and a line is written in order). A crash in the middle of an append leaves a torn tail
// without its newline: opening the log truncates the file to its last complete record, so the next append can never
// be glued onto the torn one (which was never acknowledged: its append had not resolved).
import { closeSync, ftruncateSync, fstatSync, mkdirSync, openSync, readSync } from "node:fs";
import { appendFile, open, rename, writeFile, type FileHandle } from "node:fs/promises";
import { createReadStream, existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface } from "node:readline";

/**
 * Truncates `path` after its last newline (a torn, unacknowledged last record); returns the bytes dropped.
 * A missing file is left missing.
 */
export function repairTail(path: string): number {
  if (!existsSync(path)) return 0;
  const fd = openSync(path, "r+");
  try {
    const size = fstatSync(fd).size;
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    // scan back from the end for the last newline
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(fd, chunk, 0, end - start, start);
      const nl = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (nl >= 0) {
        end = start + nl + 1;
        break;
      }
      end = start;
    }
    if (end < size) ftruncateSync(fd, end);
    return size - end;
  } finally {
    closeSync(fd);
  }
}

export class AppendLog {
  readonly path: string;
  private chain: Promise<void> = Promise.resolve();
  /** Bytes in the file, including what is queued. */
  size = 0;
  /** Bytes of a torn last record dropped when the log was opened (0: the file was whole). */
  readonly repairedBytes: number;

  /**
   * Opens (creates the folder of) the log, repairing a torn tail left by a crash. `repair: false` for a file that
   * another live process appends to (its tail may be a record being written right now).
   */
  constructor(path: string, opts: { repair?: boolean } = {}) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true });
    this.repairedBytes = opts.repair === false ? 0 : repairTail(path);
    this.size = existsSync(path) ? statSync(path).size : 0;
  }

  /** Appends the lines (no newlines inside); returns the byte position of each line. */
  append(lines: string[]): { positions: number[]; written: Promise<void> } {
    const positions: number[] = [];
    let text = "";
    for (const line of lines) {
      positions.push(this.size + Buffer.byteLength(text));
      text += line + "\n";
    }
    this.size += Buffer.byteLength(text);
    const written = this.chain.then(() => appendFile(this.path, text));
    this.chain = written.catch(() => undefined);
    return { positions, written };
  }

  /** Resolves once every queued write is done. */
  flush(): Promise<void> {
    return this.chain;
  }

  /** Replaces the whole file (after compaction), in order with the appends. */
  rewrite(lines: string[]): Promise<void> {
    const text = lines.map((l) => l + "\n").join("");
    const done = this.chain.then(async () => {
      await writeFile(this.path + ".tmp", text);
      await rename(this.path + ".tmp", this.path);
    });
    this.size = Buffer.byteLength(text);
    this.chain = done.catch(() => undefined);
    return done;
  }
}

/** Reads a JSON-lines file line by line with each line's byte position (open it as an AppendLog first: torn tails are repaired there). */
export async function* readLines(path: string): AsyncGenerator<{ line: string; pos: number; len: number }> {
  if (!existsSync(path)) return;
  const rl = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  let pos = 0;
  for await (const line of rl) {
    const len = Buffer.byteLength(line);
    if (line.length > 0) yield { line, pos, len };
    pos += len + 1;
  }
}

/** Positional reads of one file through one long-lived handle (reopened after the file was replaced). */
export class FileReader {
  private readonly path: string;
  private handle: Promise<FileHandle> | null = null;

  constructor(path: string) {
    this.path = path;
  }

  async read(pos: number, len: number): Promise<Buffer> {
    this.handle ??= open(this.path, "r");
    const fh = await this.handle;
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, pos);
    return buf;
  }

  /** Drop the handle (the file was rewritten: the old handle still sees the old inode). */
  async reset(): Promise<void> {
    const h = this.handle;
    this.handle = null;
    if (h) await (await h).close();
  }
}

/** Writes a small JSON file atomically. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  await writeFile(path + ".tmp", JSON.stringify(value));
  await rename(path + ".tmp", path);
}
