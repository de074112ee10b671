import { describe, expect, it } from "vitest";
import { decodePathLeniently, slugFor } from "./output.ts";

describe("slugFor", () => {
  it("decodes valid percent-encoding and keeps invalid sequences instead of throwing", () => {
    expect(slugFor("https://example.com/docs/caf%C3%A9.html")).toBe("example.com_docs_caf"); // trailing _ trimmed
    for (const bad of ["https://example.com/a%E0%A4%A.html", "https://example.com/%zz/x", "https://example.com/%C3%28", "https://example.com/%"]) {
      expect(() => slugFor(bad), bad).not.toThrow();
      expect(slugFor(bad).startsWith("example.com"), bad).toBe(true);
    }
    expect(decodePathLeniently("/a%20b/%E0%A4%A/%C3%A9")).toBe("/a b/%E0%A4%A/é");
  });
});
