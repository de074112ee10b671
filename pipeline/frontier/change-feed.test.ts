// The frontier's part of the change feed: at a change-tracking crawl's end, the pages no longer reached get their
// crawl.changes records and crawl.completed the job's counts; a replay of the message that ended the crawl (after a
// crash, by a new process) gives the same records and counts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CrawlEvent, CrawlOptions, FrontierInboxMessage } from "../../schemas/index.ts";
import { validator } from "../../schemas/index.ts";
import type { Consumed, Emission } from "../runtime/bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { EmbeddedSnapshotStore, type Snapshot } from "../store/snapshot-store.ts";
import { crawlUrlKey } from "../url/normalize-url.ts";
import { keyOf } from "./reducer.ts";
import { FrontierProcessor } from "./frontier.ts";

const START = "https://s.test/docs/";
const options: CrawlOptions = {
  limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip", changeTracking: { modes: ["git-diff"], tag: "" },
};
const ORIGIN = crawlUrlKey(START, options);
const k = (url: string) => keyOf(url, options);
const snap = (url: string, crawlId: string, at: number, changeStatus: Snapshot["changeStatus"]): Snapshot => ({
  teamId: "bypass", tag: "", urlKey: k(url), url, crawlId, origin: ORIGIN, scrapedAt: at, statusCode: 200, changeStatus, contentHash: "", etag: "", lastModified: "",
  optionsHash: "o", doc: JSON.stringify({ markdown: url, metadata: {} }), links: [], tracking: JSON.stringify({ previousScrapeAt: null, changeStatus, visibility: "visible" }),
});
const msg = (value: FrontierInboxMessage, offset: number): Consumed<FrontierInboxMessage> => ({ topic: "frontier.inbox", partition: 0, offset: String(offset), key: value.crawlId, value });

describe("frontier: the end of a change-tracking crawl", () => {
  it("writes the removed pages' records and crawl.completed's counts, the same again on a replay", async () => {
    const dir = mkdtempSync(join(tmpdir(), "frontier-feed-"));
    const snapshots = await EmbeddedSnapshotStore.open(dir);
    const store = await EmbeddedCrawlStore.open(null, 1);
    let t = 1_000;
    const clock = { now: () => t };
    const frontier = () => new FrontierProcessor({ store, clock, log: createLogger("silent"), snapshots });
    const run = async (p: FrontierProcessor, ...msgs: Consumed<FrontierInboxMessage>[]): Promise<Emission[]> => {
      const batch = p.createBatch();
      const out: Emission[] = [];
      for (const m of msgs) out.push(...(await p.handle(m, batch)));
      await p.afterPhase(batch, 0);
      return out;
    };
    // an earlier crawl of the lineage saw the start page and /gone
    await snapshots.put([snap(START, "c0", 10, "new"), snap(`${START}gone`, "c0", 10, "new")]);

    const first = frontier();
    await run(first, msg({ type: "CrawlRequested", crawlId: "c1", url: START, options, createdAt: 500 }, 0), msg({ type: "Admitted", crawlId: "c1", limited: false, queuedMs: 0 }, 1));
    await run(first, msg({ type: "LinksDiscovered", crawlId: "c1", urlKey: k(START), url: START, depth: 0, links: [] }, 2));
    // the sink took the start page's snapshot (the same) before its PageDone
    t = 2_000;
    await snapshots.put([snap(START, "c1", 2_000, "same")]);
    const done = msg({ type: "PageDone", crawlId: "c1", urlKey: k(START), credits: 1 }, 3);
    const end = await run(first, done);
    const completed = end.find((e) => e.topic === "crawl.events" && (e.value as CrawlEvent).type === "crawl.completed");
    expect((completed?.value as CrawlEvent).changeTracking).toEqual({ new: 0, same: 1, changed: 0, removed: 1 });
    expect(validator("crawl-event")(completed?.value)).toBe(true);
    const changes = end.filter((e) => e.topic === "crawl.changes");
    expect(changes.map((e) => [e.key, e.phase])).toEqual([["c1", 1]]);
    expect(changes[0]?.value).toEqual({
      changeId: `c1|${k(`${START}gone`)}`, crawlId: "c1", teamId: "bypass", url: `${START}gone`, urlKey: k(`${START}gone`), tag: "", changeStatus: "removed",
      visibility: "hidden", previousScrapeAt: new Date(10).toISOString(), at: 2_000,
    });
    expect(validator("crawl-change")(changes[0]?.value)).toBe(true);

    // a new process replays the PageDone that ended the crawl (its offset was not committed): the same end again
    t = 9_000;
    const replay = await run(frontier(), done);
    expect(replay.filter((e) => e.topic === "crawl.changes")).toEqual(changes);
    const again = replay.find((e) => e.topic === "crawl.events" && (e.value as CrawlEvent).type === "crawl.completed");
    expect((again?.value as CrawlEvent).changeTracking).toEqual({ new: 0, same: 1, changed: 0, removed: 1 });
    await snapshots.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
