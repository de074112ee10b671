// Re-extraction without refetching: the HTML the rules provider reads, rebuilt from a stored document — its raw
// HTML when the crawl kept it, else its cleaned HTML or its markdown, with the page's <meta> values restored from
// `metadata` (JSON-LD survives only in rawHtml).
import type { PageDocument } from "../../schemas/index.ts";

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const META = /^(og|article|twitter|dc|dcterms)([A-Z].*)$/;

export function htmlOfDocument(doc: PageDocument): string {
  if (typeof doc.rawHtml === "string" && doc.rawHtml) return doc.rawHtml;
  const metas: string[] = [];
  for (const [key, value] of Object.entries(doc.metadata)) {
    if (typeof value !== "string" && !Array.isArray(value)) continue;
    if (key === "title" || key === "description" || key === "keywords" || key === "author") {
      if (key === "title") metas.push(`<title>${esc(String(value))}</title>`);
      else metas.push(`<meta name="${key}" content="${esc(String(value))}">`);
      continue;
    }
    const m = META.exec(key);
    if (!m) continue;
    const name = `${m[1]}:${(m[2] as string).replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase()}`;
    for (const v of [value].flat()) metas.push(`<meta property="${name}" content="${esc(String(v))}">`);
  }
  const body = typeof doc.html === "string" && doc.html ? doc.html : `<pre>${esc(doc.markdown ?? "")}</pre>`;
  return `<!doctype html><html><head>${metas.join("")}</head><body>${body}</body></html>`;
}
