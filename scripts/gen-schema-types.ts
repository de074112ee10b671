// Derives the TypeScript types of schemas/*.schema.json into schemas/types.ts (run: npm run schemas).
// The JSON Schemas are the source of truth; a unit test fails when types.ts is stale.
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { compile } from "json-schema-to-typescript";

const dir = join(import.meta.dirname, "..", "schemas");

export async function renderSchemaTypes(): Promise<string> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".schema.json")).sort();
  const parts = ["// Generated from schemas/*.schema.json by `npm run schemas`. Do not edit.\n/* eslint-disable */\n"];
  const seen = new Set<string>();
  for (const file of files) {
    const schema = JSON.parse(await readFile(join(dir, file), "utf8"));
    const ts = await compile(schema, schema.title, {
      cwd: dir,
      bannerComment: "",
      declareExternallyReferenced: true,
      maxItems: -1,
      additionalProperties: false,
      format: true,
      strictIndexSignatures: false,
    });
    // Each file re-declares what it references; keep the first declaration of every name.
    for (const chunk of topLevelDeclarations(ts)) {
      const name = /export (?:interface|type) (\w+)/.exec(chunk)?.[1];
      if (!name || seen.has(name)) continue;
      seen.add(name);
      parts.push(chunk.trim() + "\n");
    }
  }
  return parts.join("\n");
}

/** Splits generated code into top-level declarations (each with its leading doc comment). */
function topLevelDeclarations(ts: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let pendingComment = false;
  for (const line of ts.split("\n")) {
    const startsDecl = line.startsWith("export ") || (line.startsWith("/**") && !pendingComment);
    if (startsDecl && !(line.startsWith("export ") && pendingComment)) {
      if (current.join("").trim()) out.push(current.join("\n"));
      current = [];
    }
    if (line.startsWith("/**")) pendingComment = true;
    if (line.startsWith("export ")) pendingComment = false;
    current.push(line);
  }
  if (current.join("").trim()) out.push(current.join("\n"));
  return out;
}

/**
 * batch-scrape-request.schema.json offers every scrape option at the top level: its scrape options are copied from
 * scrape-options.schema.json (the batch's own fields stay as written), so the two cannot drift.
 */
export async function renderBatchSchema(): Promise<string> {
  const read = async (name: string) => JSON.parse(await readFile(join(dir, `${name}.schema.json`), "utf8"));
  const [options, batch] = await Promise.all([read("scrape-options"), read("batch-scrape-request")]);
  batch.properties = { urls: batch.properties.urls, ...options.properties, ...Object.fromEntries(Object.entries(batch.properties).filter(([k]) => k !== "urls" && !(k in options.properties))) };
  return JSON.stringify(batch, null, 2) + "\n";
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await writeFile(join(dir, "batch-scrape-request.schema.json"), await renderBatchSchema());
  await writeFile(join(dir, "types.ts"), await renderSchemaTypes());
  console.log("wrote schemas/types.ts");
}
