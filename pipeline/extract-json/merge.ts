// Several pages' json into one answer (POST /v2/extract): for each property the first page that states it wins,
// arrays are concatenated without duplicates; the sources say which page each field came from.

export interface PageResult {
  url: string;
  data: unknown;
  sources: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

export function mergeResults(pages: PageResult[]): { data: unknown; sources: Record<string, { url: string; source: unknown }[]> } {
  let data: unknown = undefined;
  const sources: Record<string, { url: string; source: unknown }[]> = {};
  const note = (ptr: string, url: string, source: unknown) => (sources[ptr] ??= []).push({ url, source });
  for (const page of pages) {
    if (page.data === undefined || page.data === null) continue;
    if (data === undefined) {
      data = structuredClone(page.data);
      for (const [ptr, s] of Object.entries(page.sources)) note(ptr, page.url, s);
      continue;
    }
    if (isObject(data) && isObject(page.data)) {
      for (const [key, value] of Object.entries(page.data)) {
        const ptr = `/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
        const mine = Object.entries(page.sources).filter(([p]) => p === ptr || p.startsWith(`${ptr}/`));
        const cur = data[key];
        if (Array.isArray(cur) && Array.isArray(value)) {
          const seen = new Set(cur.map((x) => JSON.stringify(x)));
          for (const [i, item] of value.entries()) {
            if (seen.has(JSON.stringify(item))) continue;
            seen.add(JSON.stringify(item));
            const at = cur.length;
            cur.push(item);
            for (const [p, s] of mine) if (p === `${ptr}/${i}` || p.startsWith(`${ptr}/${i}/`)) note(`${ptr}/${at}${p.slice(`${ptr}/${i}`.length)}`, page.url, s);
          }
        } else if ((cur === undefined || cur === null) && value !== null && value !== undefined) {
          data[key] = value;
          for (const [p, s] of mine) note(p, page.url, s);
        }
      }
    } else if (Array.isArray(data) && Array.isArray(page.data)) {
      data.push(...page.data);
    }
  }
  return { data: data ?? {}, sources };
}
