// The shared vocabulary: every JSON Schema in this folder, compiled once with ajv.
// Imports nothing from api/ or pipeline/.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

export type * from "./types.ts";

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export const schemaDir = import.meta.dirname;

/** Every schema of this folder by file name (`crawl-request.schema.json` -> `crawl-request`). */
export const schemas: Record<string, { $id: string } & Record<string, unknown>> = Object.fromEntries(
  readdirSync(schemaDir)
    .filter((f) => f.endsWith(".schema.json"))
    .map((f) => [f.replace(".schema.json", ""), JSON.parse(readFileSync(join(schemaDir, f), "utf8"))]),
);

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
for (const schema of Object.values(schemas)) ajv.addSchema(schema);

export type SchemaName =
  | "crawl-request"
  | "scrape-options"
  | "webhook"
  | "document"
  | "crawl-options"
  | "frontier-inbox"
  | "fetch-task"
  | "page-fetched"
  | "crawl-page"
  | "page-extract"
  | "extract-request"
  | "extract-job"
  | "params-preview-request"
  | "crawl-event"
  | "webhook-delivery"
  | "scrape-request"
  | "batch-scrape-request"
  | "browser-action"
  | "render-task"
  | "map-request"
  | "search-request"
  | "team-admission"
  | "crawl-change"
  | "monitor-request"
  | "monitor-update";

/** The compiled validator of one schema. */
export function validator<T>(name: SchemaName): ValidateFunction<T> {
  const schema = schemas[name];
  if (!schema) throw new Error(`unknown schema ${name}`);
  const fn = ajv.getSchema<T>(schema.$id);
  if (!fn) throw new Error(`schema ${name} did not compile`);
  return fn;
}

/**
 * Compiles every validator now instead of on first use: a process compiles them while it starts (about 0.3 s of CPU)
 * rather than during the first requests and pages it handles, and a schema that does not compile stops the start.
 */
export function compileAll(): void {
  for (const name of Object.keys(schemas)) validator(name as SchemaName);
}

export type { ErrorObject };
