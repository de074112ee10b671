import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EmbeddedSnapshotStore, type Snapshot } from "./snapshot-store.ts";

const snap = (urlKey: string, crawlId: string, scrapedAt: number, over: Partial<Snapshot> = {}): Snapshot => ({
  teamId: "t", tag: "", urlKey, url: `http://site/${urlKey}`, crawlId, origin: "http://site/", scrapedAt, statusCode: 200, changeStatus: "new",
  contentHash: "h", etag: "", lastModified: "", optionsHash: "o", doc: JSON.stringify({ markdown: urlKey, metadata: {} }), links: [], tracking: "{}", ...over,
});

describe("EmbeddedSnapshotStore", () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), "snapshots-"));
    dirs.push(d);
    return d;
  };
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it("answers the latest snapshot per team, tag and URL, also after a restart", async () => {
    const d = dir();
    const a = await EmbeddedSnapshotStore.open(d);
    await a.put([snap("a", "c1", 1), snap("b", "c1", 1), snap("a", "c1", 1, { tag: "other", doc: "{}" })]);
    await a.put([snap("a", "c2", 2, { changeStatus: "changed" })]);
    await a.close();
    const b = await EmbeddedSnapshotStore.open(d);
    const latest = await b.latest("t", "", ["a", "b", "c"]);
    expect([...latest.keys()].sort()).toEqual(["a", "b"]);
    expect(latest.get("a")).toMatchObject({ crawlId: "c2", changeStatus: "changed" });
    expect((await b.latest("t", "other", ["a"])).get("a")?.doc).toBe("{}");
    expect((await b.latest("u", "", ["a"])).size).toBe(0);
    await b.close();
  });

  it("sweeps the lineage's pages a crawl did not reach once, and the list survives a restart", async () => {
    const d = dir();
    const s = await EmbeddedSnapshotStore.open(d);
    await s.put([snap("a", "c1", 1), snap("b", "c1", 1), snap("x", "c9", 1, { origin: "http://elsewhere/" })]);
    await s.put([snap("a", "c2", 2)]);
    const req = { teamId: "t", tag: "", origin: "http://site/", crawlId: "c2", reached: new Set(["a"]), now: 3 };
    const removed = await s.sweepRemoved(req);
    expect(removed.map((r) => r.urlKey)).toEqual(["b"]);
    expect(JSON.parse(removed[0]!.tracking)).toEqual({ previousScrapeAt: new Date(1).toISOString(), changeStatus: "removed", visibility: "hidden" });
    // a replay of the sweep: the same list, no second tombstone
    expect((await s.sweepRemoved(req)).map((r) => r.urlKey)).toEqual(["b"]);
    // the next crawl does not report it again
    expect(await s.sweepRemoved({ ...req, crawlId: "c3", reached: new Set(["a"]), now: 4 })).toEqual([]);
    await s.close();
    const again = await EmbeddedSnapshotStore.open(d);
    expect((await again.removedBy("t", "", "c2")).map((r) => r.urlKey)).toEqual(["b"]);
    await again.close();
  });

  it("counts a job's pages by change status, each URL once (a replayed snapshot is not counted again), also after a restart", async () => {
    const d = dir();
    const s = await EmbeddedSnapshotStore.open(d);
    await s.put([snap("a", "c1", 1), snap("b", "c1", 1), snap("c", "c1", 1)]);
    await s.put([snap("a", "c2", 2, { changeStatus: "changed" }), snap("b", "c2", 2, { changeStatus: "same" })]);
    await s.put([snap("b", "c2", 2, { changeStatus: "same" })]);
    await s.sweepRemoved({ teamId: "t", tag: "", origin: "http://site/", crawlId: "c2", reached: new Set(["a", "b"]), now: 3 });
    const expected = { new: 0, same: 1, changed: 1, removed: 1 };
    expect(await s.changeCounts("t", "", "c2")).toEqual(expected);
    expect(await s.changeCounts("t", "", "c1")).toEqual({ new: 3, same: 0, changed: 0, removed: 0 });
    expect(await s.changeCounts("t", "other", "c2")).toEqual({ new: 0, same: 0, changed: 0, removed: 0 });
    await s.close();
    const again = await EmbeddedSnapshotStore.open(d);
    expect(await again.changeCounts("t", "", "c2")).toEqual(expected);
    await again.close();
  });
});
