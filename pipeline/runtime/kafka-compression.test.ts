import { describe, expect, it } from "vitest";
import { allowedCompressionsAlgorithms } from "@platformatic/kafka";
import { compressionType } from "./kafka-compression.ts";

describe("compressionType", () => {
  it("names a compression the client implements for each setting", () => {
    expect(compressionType("none")).toBe("none");
    expect(compressionType("gzip")).toBe("gzip");
    expect(compressionType("zstd")).toBe("zstd");
    for (const c of ["none", "gzip", "zstd"] as const) expect(allowedCompressionsAlgorithms).toContain(compressionType(c));
  });
});
