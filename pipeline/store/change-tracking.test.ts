import { describe, expect, it } from "vitest";
import { compareJson, compareScrape, removedPage } from "./change-tracking.ts";

const at = Date.UTC(2026, 10, 20, 8, 0, 0);

describe("compareScrape", () => {
  it("is new without a previous snapshot, and removed for a 404", () => {
    expect(compareScrape(null, { markdown: "x", statusCode: 200 }, ["git-diff"])).toEqual({ previousScrapeAt: null, changeStatus: "new", visibility: "visible" });
    expect(compareScrape(null, { markdown: "x", statusCode: 404 }, []).changeStatus).toBe("removed");
  });

  it("is same when only whitespace differs, with the previous time", () => {
    const t = compareScrape({ scrapedAt: at, markdown: "# A\n\ntext  here" }, { markdown: "# A\ntext here\n", statusCode: 200 }, ["git-diff", "json"]);
    expect(t).toEqual({ previousScrapeAt: "2026-11-20T08:00:00.000Z", changeStatus: "same", visibility: "visible" });
  });

  it("is changed with the diff and the json fields that changed", () => {
    const t = compareScrape(
      { scrapedAt: at, markdown: "# Price\n\n10 EUR\n", json: { price: 10, name: "x", gone: 1 } },
      { markdown: "# Price\n\n12 EUR\n", json: { price: 12, name: "x", added: true }, statusCode: 200 },
      ["git-diff", "json"],
    );
    expect(t.changeStatus).toBe("changed");
    expect(t.diff?.text).toBe("@@ -1,3 +1,3 @@\n # Price\n \n-10 EUR\n+12 EUR\n");
    expect(t.json).toEqual({ price: { previous: 10, current: 12 }, gone: { previous: 1, current: null }, added: { previous: null, current: true } });
  });

  it("gives only the modes asked for", () => {
    const t = compareScrape({ scrapedAt: at, markdown: "a" }, { markdown: "b", statusCode: 200 }, []);
    expect(t).toEqual({ previousScrapeAt: "2026-11-20T08:00:00.000Z", changeStatus: "changed", visibility: "visible" });
  });

  it("treats a page that comes back after it was removed as new", () => {
    expect(compareScrape({ scrapedAt: at, markdown: "", removed: true }, { markdown: "a", statusCode: 200 }, ["git-diff"]))
      .toEqual({ previousScrapeAt: "2026-11-20T08:00:00.000Z", changeStatus: "new", visibility: "visible" });
  });

  it("reports a page no longer reached as removed and hidden", () => {
    expect(removedPage({ scrapedAt: at, markdown: "a" })).toEqual({ previousScrapeAt: "2026-11-20T08:00:00.000Z", changeStatus: "removed", visibility: "hidden" });
  });
});

describe("compareJson", () => {
  it("compares nested values by their JSON and ignores equal fields", () => {
    expect(compareJson({ a: [1, 2], b: { c: 1 } }, { a: [1, 2], b: { c: 2 } })).toEqual({ b: { previous: { c: 1 }, current: { c: 2 } } });
    expect(compareJson(undefined, { a: 1 })).toEqual({ a: { previous: null, current: 1 } });
  });
});
