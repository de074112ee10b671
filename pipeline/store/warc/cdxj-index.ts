// A crawl's CDXJ index, read from the per-file sidecars that each writer appends to: merged, each URL once (the
// earliest capture: a replay that archived a page again adds a later line of the same URL), sorted by SURT key
// then timestamp, as pywb and Common Crawl's index expect. Pure over the sidecars' text.

interface Line {
  key: string;
  timestamp: string;
  url: string;
  filename: string;
  offset: number;
  text: string;
}

function parse(text: string): Line | null {
  const first = text.indexOf(" ");
  const second = text.indexOf(" ", first + 1);
  if (first < 0 || second < 0) return null;
  try {
    const json = JSON.parse(text.slice(second + 1)) as { url?: string; filename?: string; offset?: string };
    if (!json.url || !json.filename) return null;
    return { key: text.slice(0, first), timestamp: text.slice(first + 1, second), url: json.url, filename: json.filename, offset: Number(json.offset), text };
  } catch {
    // a line torn by a kill while it was appended: its record is not indexed (the page's replay indexes it again)
    return null;
  }
}

const earlier = (a: Line, b: Line): boolean =>
  a.timestamp !== b.timestamp ? a.timestamp < b.timestamp : a.filename !== b.filename ? a.filename < b.filename : a.offset < b.offset;

/** Merged index lines (each ending in "\n") of the sidecars' contents. */
export function mergeCdxj(sidecars: string[]): string[] {
  const byUrl = new Map<string, Line>();
  for (const content of sidecars) {
    for (const raw of content.split("\n")) {
      if (!raw || raw.startsWith("#")) continue; // `#end <bytes>`: the writer's committed length (warc-repair.ts)
      const line = parse(raw);
      if (!line) continue;
      const seen = byUrl.get(line.url);
      if (!seen || earlier(line, seen)) byUrl.set(line.url, line);
    }
  }
  return [...byUrl.values()]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0))
    .map((l) => `${l.text}\n`);
}
