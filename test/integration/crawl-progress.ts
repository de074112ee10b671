// A fault test's view of its crawls through the public API: how far they are, asked again while a server it restarted
// is down, a wait that shows the role processes' logs when it times out, and the check of the end: exactly once.
import { expect } from "vitest";
import type { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw, sql } from "../../pipeline/store/sql.ts";
import { allChunks } from "./harness.ts";

/** Status of a crawl, or undefined while the API cannot answer (ClickHouse or Kafka down). */
export async function crawlStatus(api: string, id: string): Promise<any | undefined> {
  try {
    const res = await fetch(`${api}/v2/crawl/${id}?limit=1`, { signal: AbortSignal.timeout(5000) });
    return res.status === 200 ? await res.json() : undefined;
  } catch {
    return undefined; // the API is waiting for a server we restarted: ask again
  }
}

/** Pages completed over every crawl of `ids`, and how many of them are still scraping (or cannot be asked). */
export async function crawlProgress(api: string, ids: string[]): Promise<{ completed: number; scraping: number }> {
  const all = await Promise.all(ids.map((id) => crawlStatus(api, id)));
  return {
    completed: all.reduce((n, s) => n + (s?.completed ?? 0), 0),
    scraping: all.filter((s) => !s || s.status === "scraping").length,
  };
}

/** Waits until `check` holds, asking every quarter second; after `deadlineMs`, fails with `context()` (the logs). */
export async function until(what: string, deadlineMs: number, check: () => Promise<boolean>, context: () => string = () => ""): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * A crawl ended `completed` with exactly `paths` (the site's pages), each once in the API's answer and in the documents
 * table itself (reads hide duplicates; the writer must not make them), and credits exact.
 */
export async function expectExactlyOnce(api: string, id: string, paths: string[], ch: ClickHouseClient, context: () => string): Promise<void> {
  const chunks = await allChunks(api, id);
  expect(chunks[0]?.body, context()).toMatchObject({ status: "completed", completed: paths.length, total: paths.length, creditsUsed: paths.length });
  const served = chunks.flatMap((c) => c.body.data).map((d: any) => new URL(d.metadata.sourceURL).pathname);
  expect(served.length).toBe(paths.length);
  expect([...new Set(served)].sort()).toEqual([...paths].sort());
  const rows = await ch.query<{ rows: number; keys: number; seqs: number }>(
    sql`SELECT count() AS rows, uniqExact(url_key) AS keys, uniqExact(seq) AS seqs FROM ${raw(ch.table("documents"))} WHERE crawl_id = ${id}`,
  );
  expect(rows[0]).toEqual({ rows: paths.length, keys: paths.length, seqs: paths.length });
}
