import { describe, expect, it } from "vitest";
import { jsonWith, phases, type Emission } from "./bus.ts";

describe("jsonWith", () => {
  it("gives the JSON of the object with the raw JSON under the key", () => {
    const doc = { markdown: "a \"quoted\" \\ line\nbreak \u2028 ünï", metadata: { statusCode: 200 } };
    const text = jsonWith({ crawlId: "c", seq: 3, kind: undefined }, "document", JSON.stringify(doc));
    expect(JSON.parse(text)).toEqual({ crawlId: "c", seq: 3, document: doc });
    expect(JSON.parse(jsonWith({}, "document", "[1,2]"))).toEqual({ document: [1, 2] });
  });
});

describe("phases", () => {
  it("groups emissions by phase in ascending order, keeping order inside a phase", () => {
    const e = (key: string, phase?: number): Emission => ({ topic: "crawl.pages", key, value: {}, phase });
    const out = phases([e("p1", 1), e("a"), e("p1b", 1), e("b", 0)]);
    expect(out.map((p) => p.map((x) => x.key))).toEqual([["a", "b"], ["p1", "p1b"]]);
  });
});
