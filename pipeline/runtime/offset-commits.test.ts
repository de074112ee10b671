import { describe, expect, it } from "vitest";
import { OffsetCommits } from "./offset-commits.ts";

describe("OffsetCommits", () => {
  it("interval 0: each offset is committed before add resolves", async () => {
    const seen: [number, string][][] = [];
    const c = new OffsetCommits(0, async (o) => void seen.push(o));
    await c.add(0, "5");
    expect(seen).toEqual([[[0, "5"]]]);
    await c.add(1, "7");
    expect(seen).toEqual([[[0, "5"]], [[1, "7"]]]);
  });

  it("with an interval: the latest offset of each partition, in one commit, once the interval passed; flush commits the rest", async () => {
    const seen: [number, string][][] = [];
    const c = new OffsetCommits(40, async (o) => void seen.push(o));
    await c.add(0, "1");
    await c.add(0, "3");
    await c.add(2, "9");
    expect(seen).toEqual([]);
    await new Promise((r) => setTimeout(r, 80));
    expect(seen).toEqual([[[0, "3"], [2, "9"]]]);
    await c.add(0, "4");
    await c.flush();
    expect(seen).toEqual([[[0, "3"], [2, "9"]], [[0, "4"]]]);
    await c.flush(); // nothing pending: no empty commit
    expect(seen).toHaveLength(2);
  });

  it("commits run one at a time, in order", async () => {
    const log: string[] = [];
    let release!: () => void;
    const first = new Promise<void>((r) => (release = r));
    let n = 0;
    const c = new OffsetCommits(0, async (o) => {
      const i = n++;
      log.push(`start ${i} ${o[0]?.[1]}`);
      if (i === 0) await first;
      log.push(`end ${i}`);
    });
    const a = c.add(0, "1");
    const b = c.add(0, "2");
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(["start 0 1"]);
    release();
    await Promise.all([a, b]);
    expect(log).toEqual(["start 0 1", "end 0", "start 1 2", "end 1"]);
  });
});
