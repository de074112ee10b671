// The on-disk format of an embedded data directory, recorded in DATA_DIR/FORMAT so that a change is never silent.
// Format 1: JSON lines (no FORMAT file). Format 2: each record framed with its CRC32 (append-log.ts). Format 2 reads
// format 1 records as they are, so a format 1 directory is upgraded in place; an older Trawl must not open a
// format 2 directory (it would skip every framed record), and this version refuses a directory of a newer format.
// Format 3: bus records hold a message's JSON as it is (`"j":{…}`) instead of as an escaped string (`"v":"{…}"`);
// format 3 reads both, so format 1 and 2 directories are upgraded in place.
// Format 4: the store's documents are in segment files (store/documents/NNNNNN.jsonl, doc-segments.ts) instead of one
// store/documents.jsonl, which format 4 still reads (as segment 0, deleted once its crawls have expired): format 1-3
// directories are upgraded in place; an older Trawl would not see the documents written in segments.
// Format 5: the store's URL rows are in one log per crawl (store/urls/, url-logs.ts) instead of the journal, and
// documents are indexed on disk (store/index/, store/documents/NNNNNN.ids): format 1-4 directories are upgraded in place
// at their first start (URL rows moved, documents indexed once); an older Trawl would not see the URL rows.
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "./append-log.ts";
import { ConfigError } from "./config.ts";

export const DATA_FORMAT = 5;

/**
 * Checks (and records) the format of `dir`; returns the format it had (1: written before FORMAT existed). A directory
 * that does not exist yet or is empty is new: it is created in the current format, which is returned.
 */
export async function checkDataFormat(dir: string): Promise<number> {
  const fresh = !existsSync(dir) || readdirSync(dir).length === 0;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "FORMAT");
  let found = fresh ? DATA_FORMAT : 1;
  if (existsSync(file)) {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { format?: unknown };
    if (typeof parsed.format !== "number") throw new ConfigError(`config: DATA_DIR=${JSON.stringify(dir)} is invalid: ${file} does not name a format`);
    found = parsed.format;
  }
  if (found > DATA_FORMAT) {
    throw new ConfigError(`config: DATA_DIR=${JSON.stringify(dir)} is invalid: it holds data format ${found}, written by a newer Trawl; this version reads formats 1 to ${DATA_FORMAT}`);
  }
  if (found < DATA_FORMAT || !existsSync(file)) await writeJsonAtomic(file, { format: DATA_FORMAT, records: "JSON, a tab, its CRC32 in 8 hex digits, a newline" });
  return found;
}
