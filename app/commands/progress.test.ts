import { describe, expect, it } from "vitest";
import { progressLine, reasonSummary } from "./progress.ts";

describe("CLI progress", () => {
  it("shows the counts by reason of a running crawl, beside the bar", () => {
    expect(reasonSummary({ queued: 3, fetched: 5, out_of_scope: 2, robots_blocked: 1, excluded: 0 })).toBe("out_of_scope 2, robots_blocked 1");
    expect(progressLine({ done: 5, found: 8, failed: 0, reasons: { fetched: 5, queued: 3, too_deep: 4 } }, 1000, 10)).toBe("[######----] 5 done / 8 found / 0 failed  5.0 pages/s  (too_deep 4)");
    expect(progressLine({ done: 1, found: 1, failed: 0 }, 1000, 4)).toBe("[####] 1 done / 1 found / 0 failed  1.0 pages/s");
  });
});
