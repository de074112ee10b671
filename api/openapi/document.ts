// The OpenAPI 3.1 document of the whole HTTP API, built from the route table (routes.ts) and the JSON Schemas of
// schemas/: every schema a route refers to becomes a component (file `x.schema.json` -> `#/components/schemas/x`,
// `$defs` of api-bodies.schema.json -> `#/components/schemas/<Name>`). Served at GET /v2/openapi.json.
import { schemas } from "../../schemas/index.ts";
import { routeDocs, type BodyRef, type RouteDoc } from "./routes.ts";

type Json = Record<string, unknown>;
const RESPONSES = "api-bodies";

/** The component name a `$ref` of schemas/ points to (`document.schema.json`, `api-bodies.schema.json#/$defs/X`, `#/$defs/X`). */
function componentOf(ref: string, inFile: string): string {
  const m = /^(?:([\w-]+)\.schema\.json)?(?:#\/\$defs\/([\w-]+))?$/.exec(ref);
  if (!m || (!m[1] && !m[2])) throw new Error(`openapi: unsupported $ref ${ref} in ${inFile}.schema.json`);
  return m[2] ?? (m[1] as string);
}

/** A copy of a schema for components: no `$id`, `$ref`s to components, `$defs` hoisted by the caller. */
function rewrite(node: unknown, file: string, refs: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((n) => rewrite(n, file, refs));
  if (!node || typeof node !== "object") return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$id" || k === "$defs" || k === "title") continue;
    if (k === "$ref" && typeof v === "string") {
      const name = componentOf(v, file);
      refs.add(name);
      out.$ref = `#/components/schemas/${name}`;
    } else out[k] = rewrite(v, file, refs);
  }
  return out;
}

/** Component name -> [file, schema] for every schemas/ file and every $defs entry of api-bodies. */
function sources(): Map<string, { file: string; schema: unknown }> {
  const out = new Map<string, { file: string; schema: unknown }>();
  for (const [file, schema] of Object.entries(schemas)) {
    if (file !== RESPONSES) out.set(file, { file, schema });
  }
  const defs = (schemas[RESPONSES] as { $defs?: Json } | undefined)?.$defs ?? {};
  for (const [name, schema] of Object.entries(defs)) out.set(name, { file: RESPONSES, schema });
  return out;
}

const refTo = (body: BodyRef | NonNullable<RouteDoc["body"]>) => ({ $ref: `#/components/schemas/${body.startsWith(`${RESPONSES}#`) ? body.slice(RESPONSES.length + 1) : body}` });
/** `/v2/crawl/:id` -> `/v2/crawl/{id}` */
export const openApiPath = (koaPath: string) => koaPath.replace(/:(\w+)/g, "{$1}");

const operationId = (method: string, path: string) => `${method.toLowerCase()}${path.replace(/[^a-zA-Z0-9]+(\w)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`;

function operation(r: RouteDoc): Json {
  const pathParams = [...r.path.matchAll(/:(\w+)/g)].map((m) => m[1] as string);
  const parameters = [
    ...pathParams.map((name) => ({ name, in: "path", required: true, schema: r.params?.[name] ?? { type: "string" } })),
    ...Object.entries(r.query ?? {}).map(([name, { description, required, ...schema }]) => ({ name, in: "query", required: required ?? false, description, schema })),
  ];
  const responses: Json = {};
  for (const [status, { description, body, links }] of Object.entries(r.responses)) {
    responses[status] = {
      description,
      content: body === "html" ? { "text/html": { schema: { type: "string" } } }
        : body === "warc" ? { "application/warc": { schema: { type: "string", format: "binary" } } }
        : body === "cdxj" ? { "text/x-cdxj": { schema: { type: "string" } } }
        : body === "image" ? { "image/png": { schema: { type: "string", format: "binary" } }, "image/jpeg": { schema: { type: "string", format: "binary" } } }
        : { "application/json": { schema: refTo(body) } },
      ...(links ? { links: Object.fromEntries(Object.entries(links).map(([name, l]) => [name, { operationId: operationId(...(l.operation.split(" ") as [string, string])), parameters: l.parameters }])) } : {}),
    };
  }
  return {
    operationId: operationId(r.method, r.path),
    summary: r.summary,
    tags: [r.tag],
    ...(parameters.length ? { parameters } : {}),
    ...(r.upload ? { requestBody: { required: true, content: { "multipart/form-data": {
      schema: { type: "object", required: ["file"], properties: { file: { type: "string", format: "binary", description: "the file (.pdf, .docx, .html, .htm)" }, options: { ...refTo(r.upload.options), description: "scrape options as a JSON text part" } } },
      encoding: { options: { contentType: "application/json" } },
    } } } } : {}),
    ...(r.body ? { requestBody: { required: true, content: { "application/json": { schema: refTo(r.body), ...(r.example ? { example: r.example } : {}) } } } } : {}),
    responses,
  };
}

export function buildOpenApiDocument(routes: readonly RouteDoc[] = routeDocs): Json {
  const paths: Record<string, Json> = {};
  const wanted = new Set<string>();
  for (const r of routes) {
    const p = openApiPath(r.path);
    paths[p] = { ...paths[p], [r.method]: operation(r) };
    if (r.body) wanted.add(refTo(r.body).$ref.split("/").pop() as string);
    if (r.upload) wanted.add(r.upload.options);
    for (const { body } of Object.values(r.responses)) if (body !== "html" && body !== "image" && body !== "warc" && body !== "cdxj") wanted.add(refTo(body).$ref.split("/").pop() as string);
  }
  // components: what the routes refer to, and what those refer to
  const all = sources();
  const components: Json = {};
  const todo = [...wanted];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    if (components[name]) continue;
    const src = all.get(name);
    if (!src) throw new Error(`openapi: no schema "${name}" in schemas/`);
    const refs = new Set<string>();
    components[name] = rewrite(src.schema, src.file, refs);
    todo.push(...refs);
  }
  // document.changeTracking and document.branding are described here only: declaring them in document.schema.json
  // would narrow the open document of the public topics' registered schemas (incompatible under BACKWARD)
  const doc = components.document as { properties?: Json } | undefined;
  if (doc?.properties) {
    for (const [field, name] of [["changeTracking", "change-tracking"], ["branding", "branding"]] as const) {
      doc.properties[field] = { $ref: `#/components/schemas/${name}` };
      components[name] = rewrite(all.get(name)?.schema, name, new Set());
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Trawl API",
      version: "2",
      description: "Firecrawl v2-compatible crawling API. Generated from schemas/ and api/openapi/routes.ts.",
    },
    // draft-07 schemas of schemas/ read the same under 2020-12 (no tuple items, no $recursiveRef)
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    tags: [{ name: "crawl" }, { name: "scrape" }, { name: "batch" }, { name: "extract" }, { name: "meta" }, { name: "admin" }, { name: "monitor" }],
    paths,
    components: { schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))) },
  };
}
