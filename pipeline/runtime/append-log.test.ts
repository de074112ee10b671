// Framing and repair of the embedded append logs: a torn or damaged record is detected by its frame, dropped at
// open, and never glued to what is appended after the restart (which must survive every later restart).
import { appendFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { AppendLog, FileReader, frame, readLines, unframe } from "./append-log.ts";
import { DiskPace } from "./disk-pace.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-log-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `log-${n++}.jsonl`);
// logs keep a file handle: close every one a test opened (a test that "crashes" simply stops using its log)
const opened: AppendLog[] = [];
const openLog = (path: string) => {
  const log = new AppendLog(path);
  opened.push(log);
  return log;
};
afterEach(async () => {
  await Promise.all(opened.splice(0).map((log) => log.close()));
});
const rec = (i: number, size = 100) => JSON.stringify({ i, pad: "x".repeat(size) });

async function records(path: string, damaged: number[] = []): Promise<number[]> {
  const out: number[] = [];
  for await (const { line } of readLines(path, (pos) => damaged.push(pos))) out.push((JSON.parse(line) as { i: number }).i);
  return out;
}

describe("frame / unframe", () => {
  it("round-trips, rejects a changed record, passes unframed (format 1) lines", () => {
    const json = rec(1);
    expect(unframe(frame(json))).toBe(json);
    expect(unframe(frame(json).replace('"i":1', '"i":2'))).toBeNull();
    expect(unframe(frame(json).slice(0, -1))).toBeNull();
    expect(unframe(json)).toBe(json);
  });
});

describe("AppendLog after a crash", () => {
  it("a record torn in the middle is dropped at open; records appended after it survive two reopens", async () => {
    const path = fresh();
    const a = openLog(path);
    await a.append([rec(0), rec(1, 1_000_000)]).written;
    // kill -9 in the middle of record 1 (1 MB): cut the file half-way through it
    const whole = statSync(path).size;
    truncateSync(path, whole - 500_000);

    const b = openLog(path);
    expect(b.repairedBytes).toBe(whole - 500_000 - (Buffer.byteLength(frame(rec(0))) + 1));
    await b.append([rec(2)]).written;
    await b.append([rec(3)]).written;
    expect(await records(path)).toEqual([0, 2, 3]);

    const c = openLog(path);
    expect(c.repairedBytes).toBe(0);
    await c.append([rec(4)]).written;
    const d = openLog(path);
    expect(d.repairedBytes).toBe(0);
    expect(await records(path)).toEqual([0, 2, 3, 4]);
  });

  it("a whole last line whose checksum fails (garbage after a power cut) is dropped too", async () => {
    const path = fresh();
    await openLog(path).append([rec(0), rec(1)]).written;
    appendFileSync(path, Buffer.concat([Buffer.alloc(4096), Buffer.from("\n")]));
    appendFileSync(path, frame(rec(2)).replace('"i":2', '"i":9') + "\n");
    const log = openLog(path);
    expect(log.repairedBytes).toBe(4097 + Buffer.byteLength(frame(rec(2))) + 1);
    await log.append([rec(3)]).written;
    expect(await records(path)).toEqual([0, 1, 3]);
  });

  it("a damaged record in the middle is skipped and reported; positions stay right for positional reads", async () => {
    const path = fresh();
    const log = openLog(path);
    const { positions, written } = log.append([rec(0), rec(1), rec(2)]);
    await written;
    const text = readFileSync(path, "utf8").replace('"i":1', '"i":7');
    writeFileSync(path, text);
    const damaged: number[] = [];
    expect(await records(path, damaged)).toEqual([0, 2]);
    expect(damaged).toEqual([positions[1]]);
    const reader = new FileReader(path);
    for await (const { line, pos, len } of readLines(path)) expect((await reader.read(pos, len)).toString("utf8")).toBe(line);
    expect((await reader.read(positions[2] as number, Buffer.byteLength(rec(2)))).toString("utf8")).toBe(rec(2));
    await reader.reset();
  });

  it("reads a format 1 file (unframed lines) and keeps appending framed records to it", async () => {
    const path = fresh();
    writeFileSync(path, `${rec(0)}\n${rec(1)}\n${rec(2).slice(0, 30)}`);
    const log = openLog(path);
    expect(log.repairedBytes).toBe(30);
    await log.append([rec(3)]).written;
    expect(await records(path)).toEqual([0, 1, 3]);
    await log.rewrite([rec(0), rec(3)]);
    expect(readFileSync(path, "utf8")).toBe(`${frame(rec(0))}\n${frame(rec(3))}\n`);
  });
});

describe("AppendLog writes", () => {
  it("appends made while a write is in flight are grouped, in call order, and every position reads its record back", async () => {
    const path = fresh();
    const log = openLog(path);
    const texts: string[] = [];
    const pending: { positions: number[]; written: Promise<void> }[] = [];
    for (let i = 0; i < 300; i++) {
      // multi-byte characters make byte positions differ from string lengths
      const batch = [rec(i, i % 7), JSON.stringify({ i: -i, s: "é✓𝄞".repeat(i % 5) })];
      texts.push(...batch);
      pending.push(log.append(batch));
      if (i % 50 === 0) await pending[pending.length - 1]?.written; // some appends start a write, others join one
    }
    await Promise.all(pending.map((p) => p.written));
    const reader = new FileReader(path);
    const positions = pending.flatMap((p) => p.positions);
    for (const [k, text] of texts.entries()) {
      expect((await reader.read(positions[k] as number, Buffer.byteLength(text))).toString("utf8")).toBe(text);
    }
    await reader.reset();
    expect(log.size).toBe(statSync(path).size);
    const order = await records(path);
    expect(order).toEqual(texts.map((t) => (JSON.parse(t) as { i: number }).i));
    await log.close();
  });

  it("small batches are written on the calling thread, a batch over the bound through the thread pool, and both read back in order", async () => {
    const path = fresh();
    const log = new AppendLog(path, { syncWriteMaxBytes: 10_000, syncWriteSlowMs: 60_000, pace: new DiskPace() }); // a busy machine's stall is not a slow disk here
    opened.push(log);
    await log.append([rec(0), rec(1)]).written;
    const big = log.append([rec(2, 30_000)]); // one record over the bound
    const joined = log.append([rec(3)]); // made before the write started: grouped into it
    await Promise.all([big.written, joined.written]);
    await log.append([rec(4)]).written;
    expect(log.writes).toEqual({ sync: 2, pooled: 1 });
    expect(await records(path)).toEqual([0, 1, 2, 3, 4]);
    const reader = new FileReader(path);
    expect((await reader.read(big.positions[0] as number, rec(2, 30_000).length)).toString("utf8")).toBe(rec(2, 30_000));
    await reader.reset();
    expect(log.size).toBe(statSync(path).size);
  });

  it("a slow synchronous write sends the log's next writes to the thread pool (the event loop is not held by a slow disk)", async () => {
    const path = fresh();
    const log = new AppendLog(path, { syncWriteSlowMs: -1, pace: new DiskPace() }); // every synchronous write counts as slow
    opened.push(log);
    for (let i = 0; i < 4; i++) await log.append([rec(i)]).written;
    expect(log.writes).toEqual({ sync: 1, pooled: 3 });
    expect(await records(path)).toEqual([0, 1, 2, 3]);
    const fast = new AppendLog(fresh(), { syncWriteSlowMs: 60_000, pace: new DiskPace() });
    opened.push(fast);
    for (let i = 0; i < 4; i++) await fast.append([rec(i)]).written;
    expect(fast.writes).toEqual({ sync: 4, pooled: 0 });
  });

  it("one slow write sends every log of its disk to the thread pool, for longer each time the disk is slow again", async () => {
    const pace = new DiskPace();
    const slow = new AppendLog(fresh(), { syncWriteSlowMs: -1, pace });
    const other = new AppendLog(fresh(), { syncWriteSlowMs: 60_000, pace });
    opened.push(slow, other);
    await slow.append([rec(0)]).written;
    for (let i = 0; i < 3; i++) await other.append([rec(i)]).written;
    expect(other.writes).toEqual({ sync: 0, pooled: 3 });
    // logs opened on one device share its pace by default
    expect(DiskPace.of(tmpdir())).toBe(DiskPace.of(tmpdir()));
    const t = 1_000_000;
    const p = new DiskPace();
    p.wrote(true, t);
    expect([p.pooled(t + 9_999), p.pooled(t + 10_000)]).toEqual([true, false]);
    p.wrote(true, t + 10_000); // slow again: twice as long
    expect([p.pooled(t + 29_999), p.pooled(t + 30_000)]).toEqual([true, false]);
    p.wrote(false, t + 30_000); // fast again: back to the first backoff
    p.wrote(true, t + 40_000);
    expect(p.pooled(t + 50_000)).toBe(false);
  });

  it("after a rewrite the handle follows the new file; after close an append opens it again", async () => {
    const path = fresh();
    const log = openLog(path);
    log.append([rec(1), rec(2)]);
    await log.rewrite([rec(3)]);
    await log.append([rec(4)]).written;
    expect(await records(path)).toEqual([3, 4]);
    await log.close();
    await log.append([rec(5)]).written;
    expect(await records(path)).toEqual([3, 4, 5]);
    expect(log.size).toBe(statSync(path).size);
    await log.close();
  });

  it("rewrites queued behind each other while appends go on: size and positions stay those of the file", async () => {
    // the embedded bus trims a partition with rewrite([]) while producers append; a rewrite that counted its size only
    // once written left size at -1001 with a 17-byte file, and gave the next append a position past the end
    const path = fresh();
    const log = openLog(path);
    log.append([rec(1, 1000)]);
    const first = log.rewrite([]);
    log.append([rec(2, 0)]);
    const second = log.rewrite([]);
    const last = log.append([rec(3, 0)]);
    await Promise.all([first, second, last.written]);
    expect(await records(path)).toEqual([3]);
    expect(log.size).toBe(statSync(path).size);
    const reader = new FileReader(path);
    expect(JSON.parse((await reader.read(last.positions[0] as number, Buffer.byteLength(rec(3, 0)))).toString())).toEqual({ i: 3, pad: "" });
    await reader.reset();
  });

  it("a streamed rewrite keeps what it is given, counts its size at the end, and refuses appends while it runs", async () => {
    const path = fresh();
    const log = openLog(path);
    await log.append([rec(1), rec(2), rec(3)]).written;
    const keep = (async function* () {
      for await (const { line } of readLines(path)) if ((JSON.parse(line) as { i: number }).i !== 2) yield line;
    })();
    const running = log.rewriteFrom(keep);
    expect(() => log.append([rec(9)])).toThrow(/append during a streamed rewrite/);
    await running;
    expect(await records(path)).toEqual([1, 3]);
    expect(log.size).toBe(statSync(path).size);
    await log.append([rec(4)]).written;
    expect(await records(path)).toEqual([1, 3, 4]);
  });
});
