import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { editScript, lines, markdownDiff } from "./snapshot-diff.ts";

/** Applies a unified diff's parsed form to the old lines: must give the new lines. */
function apply(a: string[], diff: NonNullable<ReturnType<typeof markdownDiff>>): string[] {
  const out: string[] = [];
  let at = 0;
  for (const chunk of diff.json.files[0]!.chunks) {
    const first = chunk.changes.find((c) => c.type !== "add");
    const start = first ? (first.type === "normal" ? first.ln1! : first.ln!) - 1 : Number(/-(\d+)/.exec(chunk.content)![1]);
    while (at < start) out.push(a[at++]!);
    for (const c of chunk.changes) {
      if (c.type === "normal") { out.push(c.content.slice(1)); at++; }
      else if (c.type === "del") at++;
      else out.push(c.content.slice(1));
    }
  }
  while (at < a.length) out.push(a[at++]!);
  return out;
}

describe("markdownDiff", () => {
  it("gives git's unified hunks and parse-diff's form", () => {
    const before = "# Title\n\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n";
    const after = "# Title\n\nline 1\nline two\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\n";
    const d = markdownDiff(before, after)!;
    expect(d.text).toBe([
      "@@ -1,7 +1,7 @@", " # Title", " ", " line 1", "-line 2", "+line two", " line 3", " line 4", " line 5",
      "@@ -8,3 +8,4 @@", " line 6", " line 7", " line 8", "+line 9", "",
    ].join("\n"));
    const chunk = d.json.files[0]!.chunks[0]!;
    expect(d.json.files[0]).toMatchObject({ from: null, to: null });
    expect(chunk.content).toBe("@@ -1,7 +1,7 @@");
    expect(chunk.changes[0]).toEqual({ type: "normal", normal: true, ln1: 1, ln2: 1, content: " # Title" });
    expect(chunk.changes[3]).toEqual({ type: "del", del: true, ln: 4, content: "-line 2" });
    expect(chunk.changes[4]).toEqual({ type: "add", add: true, ln: 4, content: "+line two" });
  });

  it("writes git's ranges for a single line and an empty side", () => {
    expect(markdownDiff("a\n", "b\n")!.text).toBe("@@ -1 +1 @@\n-a\n+b\n");
    expect(markdownDiff("", "a\nb\n")!.text).toBe("@@ -0,0 +1,2 @@\n+a\n+b\n");
    expect(markdownDiff("a\nb\n", "")!.text).toBe("@@ -1,2 +0,0 @@\n-a\n-b\n");
  });

  it("is null for equal lines", () => {
    expect(markdownDiff("a\nb", "a\nb\n")).toBeNull();
  });

  it("turns the old lines into the new ones (property)", () => {
    const text = fc.array(fc.constantFrom("a", "b", "c", "d", ""), { maxLength: 40 }).map((l) => l.join("\n"));
    fc.assert(fc.property(text, text, (x, y) => {
      const d = markdownDiff(x, y);
      const a = lines(x);
      const b = lines(y);
      if (!d) {
        expect(a).toEqual(b);
        return;
      }
      expect(apply(a, d)).toEqual(b);
      const ops = editScript(a, b);
      expect(ops.filter((o) => o.kind !== "add").length).toBe(a.length);
      expect(ops.filter((o) => o.kind !== "del").length).toBe(b.length);
    }), { numRuns: 300 });
  });
});
