// gatherEvidence on hostile JSON-LD: a block nested deeper than MAX_JSON_DEPTH states nothing (it used to be parsed and
// then walked recursively until the stack overflowed: a RangeError out of the page's extraction).
import { describe, expect, it } from "vitest";
import { parseHtml } from "../convert/parse-html.ts";
import { MAX_JSON_DEPTH } from "../runtime/json-depth.ts";
import { gatherEvidence } from "./evidence.ts";

const page = (...blocks: string[]) =>
  `<html><head>${blocks.map((b) => `<script type="application/ld+json">${b}</script>`).join("")}</head><body><p>Hello</p></body></html>`;
const nested = (levels: number, inner: string) => "[".repeat(levels) + inner + "]".repeat(levels);

describe("JSON-LD evidence", () => {
  it("skips a block nested deeper than the limit, keeps the others", () => {
    const product = '{"@type":"Product","name":"Kettle"}';
    const evidence = gatherEvidence(parseHtml(page(nested(200_000, product), nested(MAX_JSON_DEPTH - 1, product))));
    expect(evidence.entities.filter((e) => e.kind === "json-ld").map((e) => e.data.name)).toEqual(["Kettle"]);
  });
});
