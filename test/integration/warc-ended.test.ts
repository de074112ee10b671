// A fetch task of a crawl that has ended is dropped, not fetched nor archived, in both modes: after a kill -9 of
// fetch-render the tasks after its last committed offset are delivered again, also those of crawls that completed in
// the meantime (their pages were fetched, stored and counted before the kill). Here a crawl with `warc: true`
// completes, then two of its own fetch tasks (a page's and the discover task's, as the frontier produced them) are
// produced to fetch.tasks again by hand: once fetch-render has committed them, the site has had no request more and
// the crawl's WARC files and CDXJ index are as they were.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FetchTask } from "../../schemas/index.ts";
import type { Bus, Emission } from "../../pipeline/runtime/bus.ts";
import { keys } from "../../pipeline/topology.ts";
import { politenessKey } from "../../pipeline/url/politeness-key.ts";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

/** Keeps a copy of every fetch task produced through `bus`. */
function recordTasks(bus: Bus): FetchTask[] {
  const tasks: FetchTask[] = [];
  const produce = bus.produce.bind(bus);
  bus.produce = async (messages: Emission[]) => {
    for (const m of messages) if (m.topic === "fetch.tasks") tasks.push(structuredClone(m.value as FetchTask));
    await produce(messages);
  };
  return tasks;
}

/** fetch-render's uncommitted fetch tasks (trawl_consumer_lag), or -1 while /metrics has no such series. */
async function fetchLag(api: string): Promise<number> {
  const text = await (await fetch(`${api}/metrics`)).text();
  let lag = -1;
  for (const line of text.split("\n")) {
    if (!line.startsWith("trawl_consumer_lag{") || !/topic="[^"]*fetch\.tasks"/.test(line) || !/group="[^"]*fetch-render"/.test(line)) continue;
    lag = Math.max(lag, 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return lag;
}

async function archives(api: string, id: string): Promise<{ files: unknown; cdxj: string }> {
  return { files: (await getJson(`${api}/v2/crawl/${id}/warc`)).body, cdxj: await (await fetch(`${api}/v2/crawl/${id}/cdxj`)).text() };
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  beforeAll(async () => {
    [trawl, site] = await Promise.all([startTrawl({ mode }), startFixtureSite()]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("a fetch task of a completed crawl delivered again is not fetched and adds no WARC record", async () => {
    const tasks = recordTasks(trawl.running.bus);
    const started = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 5, warc: true });
    expect(started.status).toBe(200);
    const id = started.body.id as string;
    expect((await waitForEnd(trawl.api, id, 60_000)).at(-1).status).toBe("completed");
    const mine = tasks.filter((t) => t.crawlId === id);
    const page = mine.find((t) => t.kind === "page" && t.depth > 0)!;
    const discover = mine.find((t) => t.kind === "discover")!;
    expect(page).toBeDefined();
    expect(discover).toBeDefined();
    const before = await archives(trawl.api, id);
    expect(before.cdxj).toContain(page.url);
    const hits = new Map(site.hits);
    // fetch-render reads whether a crawl ended at most once a second (its CancelCache): a task delivered again within
    // that second of a read that found the crawl running is still fetched; after a restart the first read is fresh
    await new Promise((r) => setTimeout(r, 1100));

    await trawl.running.bus.produce([page, discover].map((value) => ({ topic: "fetch.tasks", key: keys.politeness(politenessKey(value.url)), value })));
    // both handled and committed: fetch-render's lag back to 0
    for (let i = 0; ; i++) {
      if ((await fetchLag(trawl.api)) === 0) break;
      if (i > 300) throw new Error("fetch-render did not commit the tasks within 30 s");
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300)); // a fetch started anyway would have reached the site by now
    expect(site.hits).toEqual(hits);
    expect(await archives(trawl.api, id)).toEqual(before);
  });
});
