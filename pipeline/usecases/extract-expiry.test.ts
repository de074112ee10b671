// GET /v2/extract/:id answers until the job's expiresAt and not after, as a crawl's status does: the job's rows may
// stay until a sweep that comes later (they were readable up to 48 h).
import { expect, it } from "vitest";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { readExtract } from "./extract-job.ts";
import { saveFinal, saveSubmitted, type ExtractState } from "./extract-record.ts";
import { RETENTION_MS } from "../runtime/constants.ts";

it("an extract job answers until its expiresAt, then as unknown, while its rows are still stored", async () => {
  const store = await EmbeddedCrawlStore.open(null, 0);
  let t = 1_000_000;
  const deps = { store, clock: { now: () => t } };
  const state = (status: ExtractState["status"], expiresAt: number): ExtractState =>
    ({ status, tokensUsed: 0, expiresAt, showSources: false, teamId: "team", request: { urls: ["https://s.test/"] } } as ExtractState);
  await saveSubmitted(deps, "j1", state("processing", t + RETENTION_MS));
  t += 3_600_000; // done an hour later: 24 h from then
  await saveFinal(deps, "j1", state("completed", t + RETENTION_MS));
  expect((await readExtract(deps, "team", "j1"))?.status).toBe("completed");
  expect(await readExtract(deps, "other", "j1")).toBeUndefined();
  t += RETENTION_MS - 60_000;
  expect((await readExtract(deps, "team", "j1"))?.status).toBe("completed");
  t += 60_000;
  expect(await readExtract(deps, "team", "j1")).toBeUndefined();
});
