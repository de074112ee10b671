import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDataFormat, DATA_FORMAT } from "./data-format.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-format-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const formatIn = (d: string) => (JSON.parse(readFileSync(join(d, "FORMAT"), "utf8")) as { format: number }).format;

describe("checkDataFormat", () => {
  it("creates a new directory in the current format: nothing to upgrade (the start logged an upgrade from format 1)", async () => {
    const d = join(dir, "new", "data");
    expect(await checkDataFormat(d)).toBe(DATA_FORMAT);
    expect(formatIn(d)).toBe(DATA_FORMAT);
    const empty = join(dir, "empty");
    mkdirSync(empty);
    expect(await checkDataFormat(empty)).toBe(DATA_FORMAT);
    expect(formatIn(empty)).toBe(DATA_FORMAT);
  });

  it("upgrades a format 1 directory (data, no FORMAT file), reads the current one, refuses a newer one naming DATA_DIR", async () => {
    const d = join(dir, "old");
    mkdirSync(join(d, "store"), { recursive: true });
    writeFileSync(join(d, "store", "crawls.jsonl"), '{"id":"a"}\n');
    expect(existsSync(join(d, "FORMAT"))).toBe(false);
    expect(await checkDataFormat(d)).toBe(1);
    expect(formatIn(d)).toBe(DATA_FORMAT);
    expect(await checkDataFormat(d)).toBe(DATA_FORMAT);
    writeFileSync(join(d, "FORMAT"), JSON.stringify({ format: DATA_FORMAT + 1 }));
    await expect(checkDataFormat(d)).rejects.toThrow(new RegExp(`DATA_DIR=.*data format ${DATA_FORMAT + 1}, written by a newer Trawl`));
  });
});
