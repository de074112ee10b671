// The shape of the code, checked: no import cycle, and no source file over 400 lines (generated code and tests aside).
// Which folder may import which is ESLint's job (eslint.config.js, `layers`).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const FOLDERS = ["app", "api", "pipeline", "schemas", "clients", "bin"];
const GENERATED = new Set(["schemas/types.ts"]);

function sourceFiles(): string[] {
  return FOLDERS.flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
      .filter((f) => /\.(ts|js)$/.test(f))
      .map((f) => join(folder, f)),
  );
}

/** file -> the project files it imports (static and dynamic relative imports). */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    const targets = [...text.matchAll(/(?:from|import\()\s*["'](\.[^"']+)["']/g)].map((m) => normalize(join(dirname(file), m[1] as string)));
    graph.set(file, targets.filter((t) => files.includes(t)));
  }
  return graph;
}

/** Every cycle's files (strongly connected components of more than one file, or a file importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

describe("architecture", () => {
  const files = sourceFiles();

  it("has no import cycle", () => {
    expect(cycles(importGraph(files))).toEqual([]);
  });

  it("finds a cycle when there is one (the check itself)", () => {
    expect(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]))).toEqual([["a", "b", "c"]]);
  });

  it("keeps source files under 400 lines", () => {
    const long = files
      .filter((f) => !f.endsWith(".test.ts") && !GENERATED.has(relative(root, join(root, f))))
      .map((f) => ({ f, lines: readFileSync(join(root, f), "utf8").split("\n").length }))
      .filter((x) => x.lines > 400);
    expect(long).toEqual([]);
  });
});
