import { readFileSync } from "node:fs";
import { join } from "node:path";
import { htmlFilesDeep } from "./corpus.ts";
import { processHtml } from "../pipeline/convert/html.ts";
import { renderMarkdown } from "../pipeline/convert/render-markdown.ts";
for (const dir of ["/usr/share/doc/postgresql-doc-15/html", "/usr/share/doc/python3.11/html"]) {
  const files = htmlFilesDeep(dir);
  let differ = 0, links = 0, meta = 0; const ex: string[] = [];
  for (const f of files) {
    const html = readFileSync(join(dir, f), "utf8"); const url = `https://docs.test/${f}`;
    const a = processHtml(html, url, { onlyMainContent: true }, "fast");
    const b = processHtml(html, url, { onlyMainContent: true }, "parse5");
    if (renderMarkdown(a.root) !== renderMarkdown(b.root)) { differ++; if (ex.length < 5) ex.push(f); }
    if (JSON.stringify(a.links) !== JSON.stringify(b.links)) links++;
    if (JSON.stringify(a.metadata) !== JSON.stringify(b.metadata)) meta++;
  }
  console.log(dir, { pages: files.length, markdownDiffers: differ, linksDiffer: links, metadataDiffer: meta, examples: ex });
}
