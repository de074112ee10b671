// An append-only JSON-lines file: writes are serialised in call order; each resolves once its lines are written.
import { mkdirSync } from "node:fs";
import { appendFile, open, rename, writeFile, type FileHandle } from "node:fs/promises";
import { createReadStream, existsSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface } from "node:readline";

export class AppendLog {
  readonly path: string;
  private chain: Promise<void> = Promise.resolve();
  /** Bytes in the file, including what is queued. */
  size = 0;

  constructor(path: string, size = 0) {
    this.path = path;
    this.size = size;
    mkdirSync(dirname(path), { recursive: true });
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

/** Reads a JSON-lines file line by line with each line's byte position; a torn last line is skipped. */
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
