// Writes a crawl's documents as files: one per page and format, plus index.jsonl with each page's metadata, and
// urls.jsonl with every URL the crawl saw and why it was fetched, skipped or failed.
import { mkdirSync, createWriteStream, writeFileSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { PageDocument } from "../../schemas/index.ts";

const EXTENSIONS: Record<string, string> = { markdown: "md", html: "html", rawHtml: "raw.html" };

/** Decodes the valid percent-encoded UTF-8 runs of a path and keeps the others as they are (a page may link to
 * `/a%E0%A4%A` or `/%zz`: one such link must not abort a crawl). */
export function decodePathLeniently(path: string): string {
  return path.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** A file name for a URL: host and path, safe on every file system; `index` for a directory. */
export function slugFor(url: string): string {
  const u = new URL(url);
  let path = decodePathLeniently(u.pathname);
  if (path.endsWith("/")) path += "index";
  path = path.replace(/\.(html?|php|aspx?)$/i, "");
  const query = u.search ? "_" + u.search.slice(1) : "";
  const slug = `${u.host}${path}${query}`.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^_+|_+$/g, "");
  return slug.slice(0, 180) || "page";
}

export class CrawlOutput {
  readonly dir: string;
  private readonly index: WriteStream;
  private readonly used = new Set<string>();
  written = 0;

  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(join(dir, "pages"), { recursive: true });
    this.index = createWriteStream(join(dir, "index.jsonl"), { flags: "w" });
  }

  write(seq: number, doc: PageDocument): void {
    let slug = slugFor(String(doc.metadata.url ?? doc.metadata.sourceURL));
    if (this.used.has(slug)) slug = `${slug}-${seq}`;
    this.used.add(slug);
    const files: Record<string, string> = {};
    for (const [format, ext] of Object.entries(EXTENSIONS)) {
      const content = doc[format];
      if (typeof content !== "string") continue;
      const file = join("pages", `${slug}.${ext}`);
      writeFileSync(join(this.dir, file), content);
      files[format] = file;
    }
    this.index.write(JSON.stringify({ seq, files, ...(doc.links ? { links: doc.links } : {}), ...(doc.images ? { images: doc.images } : {}), metadata: doc.metadata }) + "\n");
    this.written++;
  }

  /** urls.jsonl: one line per URL the crawl saw (GET /v2/crawl/:id/urls's entries). */
  writeUrls(entries: object[]): void {
    writeFileSync(join(this.dir, "urls.jsonl"), entries.map((e) => JSON.stringify(e) + "\n").join(""));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.index.end(resolve));
  }
}
