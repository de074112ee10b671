import { describe, expect, it } from "vitest";
import { phases, type Emission } from "./bus.ts";

describe("phases", () => {
  it("groups emissions by phase in ascending order, keeping order inside a phase", () => {
    const e = (key: string, phase?: number): Emission => ({ topic: "crawl.pages", key, value: {}, phase });
    const out = phases([e("p1", 1), e("a"), e("p1b", 1), e("b", 0)]);
    expect(out.map((p) => p.map((x) => x.key))).toEqual([["a", "b"], ["p1", "p1b"]]);
  });
});
