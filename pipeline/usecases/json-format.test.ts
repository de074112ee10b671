// formats [{type:"json", schema, prompt}] and "summary" at submit: accepted, schemas compiled, bad schemas refused.
import { describe, expect, it } from "vitest";
import { HttpError } from "../../api/errors.ts";
import { validateBody } from "../../api/validate.ts";
import { RequestError } from "../runtime/errors.ts";
import { scrapeSettings } from "./request-options.ts";

const refusal = (fn: () => unknown): Record<string, unknown> => {
  try {
    fn();
  } catch (err) {
    if (err instanceof RequestError) return { code: err.code, error: err.message, details: err.issues };
    throw err;
  }
  throw new Error("accepted");
};

describe("json and summary formats at submit", () => {
  it("are accepted, with the schema and prompt kept for the pipeline", () => {
    const schema = { type: "object", properties: { name: { type: "string" } } };
    const body = validateBody<{ url: string; formats: [] }>("scrape-request", { url: "https://x.test", formats: ["markdown", { type: "json", schema, prompt: "the name" }, "summary"] });
    expect(scrapeSettings(body, [])).toMatchObject({ formats: ["markdown", "json", "summary"], json: { schema, prompt: "the name" } });
    expect(scrapeSettings({ formats: [{ type: "summary" }] }, ["scrapeOptions"]).formats).toEqual(["summary"]);
  });

  it("an invalid JSON Schema is a 400 naming the problem", () => {
    const r = refusal(() => scrapeSettings({ formats: [{ type: "json", schema: { type: "strnig" } }] }, ["scrapeOptions"]));
    expect(r).toMatchObject({ code: "BAD_REQUEST" });
    expect(String(r.error)).toMatch(/invalid JSON Schema: schema is invalid: data\/type must be equal to one of the allowed values/);
    expect(r.details).toEqual([expect.objectContaining({ path: ["scrapeOptions", "formats", 0, "schema"] })]);
    const r2 = refusal(() => scrapeSettings({ formats: [{ type: "json", schema: { type: "object", required: "name" } }] }, []));
    expect(String(r2.error)).toContain("required must be array");
  });

  it("systemPrompt inside the json format and unknown formats are refused by the body schema", () => {
    expect(() => validateBody("scrape-request", { url: "https://x.test", formats: [{ type: "json", systemPrompt: "x" }] })).toThrow(HttpError);
    expect(() => validateBody("scrape-request", { url: "https://x.test", formats: ["summaries"] })).toThrow(HttpError);
  });
});
