// Record framing that no content can break: the embedded logs are split at the byte 0x0A alone. A line splitter
// (node's readline) also broke records at U+2028 / U+2029, which JSON.stringify leaves raw inside strings, and at a
// lone carriage return: such a record was read back as two damaged halves (the page cache then aborted the start).
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AppendLog, FileReader, frame, jsonLength, readLines } from "./append-log.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-read-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `log-${n++}.jsonl`);

/** Strings as pages hold them: each is written inside a record by JSON.stringify. */
const HOSTILE = [
  "line\u2028separator", "paragraph\u2029separator", "\u2028\u2029", "nul\u0000byte", "lone \ud800 high", "lone \udfff low", "cut \ud83d", "\udc00 first",
  "cr\ronly", "crlf\r\nend", "lf\nend", "nel\u0085", "tab\tinside", "emoji 𝄞 é ✓", "\r", "\u2028",
];

async function readAll(path: string, chunkBytes?: number): Promise<{ records: { line: string; pos: number; len: number }[]; damaged: number[] }> {
  const records: { line: string; pos: number; len: number }[] = [];
  const damaged: number[] = [];
  for await (const { line, pos, len, bytes } of readLines(path, (pos) => damaged.push(pos), chunkBytes)) {
    expect(bytes.toString("utf8")).toBe(line);
    records.push({ line, pos, len });
  }
  return { records, damaged };
}

async function writeLog(path: string, texts: string[]): Promise<number[]> {
  const log = new AppendLog(path);
  const { positions, written } = log.append(texts);
  await written;
  await log.close();
  return positions;
}

describe("readLines splits at the byte 0x0A alone", () => {
  it("reads back every record holding U+2028, U+2029, NUL, lone surrogates or CR, wherever a read boundary falls", async () => {
    const texts = [
      ...HOSTILE.map((s, i) => JSON.stringify({ i, s })),
      JSON.stringify({ all: HOSTILE.join("") }),
      // raw carriage returns are JSON whitespace: a record may hold them outside strings
      '{"a":1,\r"b":\r"\u2028"}',
    ];
    const path = fresh();
    const positions = await writeLog(path, texts);
    // each buffer size puts the read boundaries elsewhere: inside characters, frames, newlines (it grows to hold a record)
    for (let chunkBytes = 1; chunkBytes <= 96; chunkBytes++) {
      const { records, damaged } = await readAll(path, chunkBytes);
      expect(damaged).toEqual([]);
      expect(records.map((r) => r.line)).toEqual(texts);
      expect(records.map((r) => r.pos)).toEqual(positions);
    }
    const { records } = await readAll(path);
    expect(records.map((r) => r.len)).toEqual(texts.map((t) => Buffer.byteLength(t)));
    // what JSON.stringify wrote is what JSON.parse reads: lone surrogates included
    expect(records.slice(0, HOSTILE.length).map((r) => (JSON.parse(r.line) as { s: string }).s)).toEqual(HOSTILE);
  });

  it("reads 1 MB lines of multi-byte characters (longer than the buffer), and positional reads return each record", async () => {
    const texts = [
      JSON.stringify({ s: "\u2028" }),
      JSON.stringify({ big: `${"\u2028é𝄞x".repeat(100_000)}\u2029` }), // ~1 MB, multi-byte characters throughout
      JSON.stringify({ big: "y".repeat(1_048_576) }),
      JSON.stringify({ after: "\u2029" }),
      JSON.stringify({ big: "\u2029".repeat(700_000) }), // 2.1 MB
    ];
    const path = fresh();
    const positions = await writeLog(path, texts);
    const reader = new FileReader(path);
    for (const chunkBytes of [1, 4093, 65_536, undefined]) {
      const { records, damaged } = await readAll(path, chunkBytes);
      expect(damaged).toEqual([]);
      expect(records.map((r) => r.line)).toEqual(texts);
      expect(records.map((r) => r.pos)).toEqual(positions);
      for (const r of records) expect((await reader.read(r.pos, r.len)).toString("utf8")).toBe(r.line);
    }
    await reader.reset();
  });

  it("reports a damaged record at its byte position after multi-byte records, and skips only it", async () => {
    const texts = [JSON.stringify({ s: "\u2028".repeat(1000) }), JSON.stringify({ s: "damaged" }), JSON.stringify({ s: "é\u2029" })];
    const path = fresh();
    const positions = await writeLog(path, texts);
    const bytes = readFileSync(path);
    const at = bytes.indexOf("damaged");
    bytes.write("DAMAGED", at);
    writeFileSync(path, bytes);
    for (const chunkBytes of [3, undefined]) {
      const { records, damaged } = await readAll(path, chunkBytes);
      expect(damaged).toEqual([positions[1]]);
      expect(records.map((r) => r.line)).toEqual([texts[0], texts[2]]);
      expect(records.map((r) => r.pos)).toEqual([positions[0], positions[2]]);
    }
  });

  it("reads format 1 lines holding those characters; a last line without its newline is not a record", async () => {
    const path = fresh();
    const old = JSON.stringify({ s: "\u2028\u2029\r" });
    writeFileSync(path, `${old}\n\n${frame(JSON.stringify({ s: 2 }))}\n`);
    appendFileSync(path, frame(JSON.stringify({ s: "torn \u2028" })));
    for (const chunkBytes of [1, undefined]) {
      const { records, damaged } = await readAll(path, chunkBytes);
      expect(damaged).toEqual([]);
      expect(records.map((r) => r.line)).toEqual([old, JSON.stringify({ s: 2 })]);
      expect(records[1]?.pos).toBe(Buffer.byteLength(old) + 2);
    }
  });

  it("a missing file has no records", async () => {
    expect((await readAll(join(dir, "missing.jsonl"))).records).toEqual([]);
  });
});

describe("jsonLength (the frame check on bytes)", () => {
  it("is the JSON's byte length of a framed line, the whole line unframed, -1 when damaged", () => {
    const json = JSON.stringify({ s: "\u2028é𝄞" });
    const line = Buffer.from(frame(json));
    expect(jsonLength(line)).toBe(Buffer.byteLength(json));
    expect(jsonLength(Buffer.from(frame(json).replace("é", "e")))).toBe(-1); // the JSON changed
    expect(jsonLength(Buffer.from(`${json}\t${frame(json).slice(-8).toUpperCase()}`))).toBe(Buffer.byteLength(json));
    expect(jsonLength(Buffer.from(json))).toBe(Buffer.byteLength(json));
    expect(jsonLength(Buffer.from(`${json}\t1234567z`))).toBe(-1);
    expect(jsonLength(Buffer.from(`${json}\tab`))).toBe(-1);
    expect(jsonLength(line.subarray(0, line.length - 1))).toBe(-1);
  });
});
