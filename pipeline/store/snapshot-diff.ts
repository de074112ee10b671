// The `git-diff` mode of the changeTracking format: a unified diff of two markdown texts, as text (hunks only, like
// the `git-diff` package Firecrawl uses: no `---`/`+++` header) and in the parsed form Firecrawl derives from it with
// `parse-diff` (`{files: [{from, to, chunks: [{content, changes}]}]}`). Myers' O(ND) line diff, 3 lines of context.

export interface DiffChange {
  type: "normal" | "add" | "del";
  normal?: true;
  add?: true;
  del?: true;
  /** line number in the old (del) or new (add) text */
  ln?: number;
  /** line numbers in the old and new texts (normal) */
  ln1?: number;
  ln2?: number;
  /** the line with its prefix: " ", "+" or "-" */
  content: string;
}

export interface DiffChunk {
  /** the hunk header, `@@ -a,b +c,d @@` */
  content: string;
  changes: DiffChange[];
}

export interface MarkdownDiff {
  text: string;
  json: { files: { from: string | null; to: string | null; chunks: DiffChunk[] }[] };
}

const CONTEXT = 3;

/** Lines of a text; a final newline ends the last line rather than starting an empty one. */
export function lines(text: string): string[] {
  if (text === "") return [];
  const out = text.split("\n");
  if (out.at(-1) === "") out.pop();
  return out;
}

type Op = { kind: "eq" | "del" | "add"; a: number; b: number };

/** Myers' shortest edit script between a and b, as operations in order (indices into a and b). */
export function editScript(a: string[], b: string[]): Op[] {
  // common prefix and suffix first: most page edits are local
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const n = endA - start;
  const m = endB - start;
  const max = n + m;
  const v = new Int32Array(2 * max + 2);
  const trace: Int32Array[] = [];
  let found = max === 0;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && (v[max + k - 1] as number) < (v[max + k + 1] as number)) ? (v[max + k + 1] as number) : (v[max + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && a[start + x] === b[start + y]) {
        x++;
        y++;
      }
      v[max + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // walk the trace back from (n, m)
  const middle: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0 && (x > 0 || y > 0); d--) {
    const vd = trace[d] as Int32Array;
    const k = x - y;
    const down = k === -d || (k !== d && (vd[max + k - 1] as number) < (vd[max + k + 1] as number));
    const prevK = down ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : (vd[max + prevK] as number);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      middle.push({ kind: "eq", a: start + x, b: start + y });
    }
    if (d === 0) break;
    if (down) middle.push({ kind: "add", a: start + x, b: start + y - 1 });
    else middle.push({ kind: "del", a: start + x - 1, b: start + y });
    x = prevX;
    y = prevY;
  }
  middle.reverse();
  const ops: Op[] = [];
  for (let i = 0; i < start; i++) ops.push({ kind: "eq", a: i, b: i });
  ops.push(...middle);
  for (let i = 0; i < a.length - endA; i++) ops.push({ kind: "eq", a: endA + i, b: endB + i });
  return ops;
}

/** `-start,count`: git's form (a count of 1 is left out; an empty side starts at the line before). */
function range(start: number, count: number): string {
  if (count === 1) return `${start}`;
  return `${count === 0 ? start - 1 : start},${count}`;
}

/** The unified diff of two texts, or null when their lines are equal. */
export function markdownDiff(previous: string, current: string): MarkdownDiff | null {
  const a = lines(previous);
  const b = lines(current);
  const ops = editScript(a, b);
  const changed = ops.map((o, i) => (o.kind === "eq" ? -1 : i)).filter((i) => i >= 0);
  if (changed.length === 0) return null;
  // hunks: runs of changes closer than 2 × CONTEXT lines share one hunk
  const groups: [number, number][] = [];
  for (const i of changed) {
    const last = groups.at(-1);
    if (last && i - last[1] <= 2 * CONTEXT) last[1] = i;
    else groups.push([i, i]);
  }
  const chunks: DiffChunk[] = [];
  const text: string[] = [];
  for (const [first, lastChange] of groups) {
    const from = Math.max(0, first - CONTEXT);
    const to = Math.min(ops.length - 1, lastChange + CONTEXT);
    const slice = ops.slice(from, to + 1);
    const head = slice[0] as Op;
    const oldCount = slice.filter((o) => o.kind !== "add").length;
    const newCount = slice.filter((o) => o.kind !== "del").length;
    const oldStart = head.kind === "add" ? head.a + 1 : head.a + 1;
    const newStart = head.kind === "del" ? head.b + 1 : head.b + 1;
    const header = `@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`;
    const changes: DiffChange[] = slice.map((o) => {
      if (o.kind === "eq") return { type: "normal", normal: true, ln1: o.a + 1, ln2: o.b + 1, content: ` ${a[o.a] as string}` };
      if (o.kind === "del") return { type: "del", del: true, ln: o.a + 1, content: `-${a[o.a] as string}` };
      return { type: "add", add: true, ln: o.b + 1, content: `+${b[o.b] as string}` };
    });
    chunks.push({ content: header, changes });
    text.push(header, ...changes.map((c) => c.content));
  }
  return { text: `${text.join("\n")}\n`, json: { files: [{ from: null, to: null, chunks }] } };
}
