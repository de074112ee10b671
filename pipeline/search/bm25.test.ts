import { describe, expect, it } from "vitest";
import { headingsOf, rankBm25, snippet, tokens, type IndexedDoc } from "./bm25.ts";

const doc = (url: string, title: string, markdown: string): IndexedDoc => ({ url, title, description: "", headings: headingsOf(markdown), markdown });

describe("bm25", () => {
  it("tokenises any script, lower-case", () => {
    expect(tokens("Kafka-Streams über ÉTÉ 2024")).toEqual(["kafka", "streams", "über", "été", "2024"]);
  });

  it("ranks rare terms and title/heading matches higher; drops documents without a term", () => {
    const docs = [
      doc("a", "Kafka consumer", "# Consumers\nThe consumer reads records."),
      doc("b", "Misc", "kafka is mentioned once among many other words about nothing in particular at all"),
      doc("c", "Other", "no match here"),
      doc("d", "Offsets", "## Kafka offsets\nconsumer offsets are committed"),
    ];
    const ranked = rankBm25(docs, ["kafka", "consumer"], 100, [3, 2]);
    expect(ranked.map((r) => r.item.url)).toEqual(["a", "d", "b"]);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
  });

  it("weights a term by its rarity in the corpus", () => {
    const docs = [doc("x", "", "alpha"), doc("y", "", "beta")];
    const ranked = rankBm25(docs, ["alpha", "beta"], 1000, [900, 3]);
    expect(ranked.map((r) => r.item.url)).toEqual(["y", "x"]);
  });

  it("snippets the first line with a query term", () => {
    expect(snippet("# Title\n\nintro line\n\n- the kafka line is here", ["kafka"])).toBe("the kafka line is here");
    expect(snippet("a".repeat(300), ["zzz"]).length).toBe(200);
  });
});
