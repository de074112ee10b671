// The OpenAPI document describes exactly the routes the Koa app has (walked from the routers' stacks), and its
// schemas compile.
import type Koa from "koa";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { systemClock } from "../../pipeline/runtime/clock.ts";
import { createApp } from "../app.ts";
import { buildOpenApiDocument, openApiPath } from "./document.ts";

interface Layer { path: string; methods: string[] }

/** `METHOD /path` of every route registered on a router the app mounts. */
function appRoutes(app: Koa): string[] {
  const out: string[] = [];
  for (const mw of app.middleware as { router?: { stack: Layer[] } }[]) {
    for (const layer of mw.router?.stack ?? []) {
      for (const method of layer.methods) if (method !== "HEAD") out.push(`${method} ${openApiPath(layer.path)}`);
    }
  }
  return out.sort();
}

const app = createApp({
  config: loadConfig({}), log: createLogger("silent"), clock: systemClock, ready: async () => true,
  // never called: the routes are only listed
  store: {} as never, bus: {} as never, fetcher: {} as never, convert: {} as never, robots: {} as never, searchBackend: {} as never,
});
const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } };

describe("OpenAPI document", () => {
  it("has exactly the routes of the Koa routers (paths and methods)", () => {
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    const routes = appRoutes(app);
    expect(routes.length).toBeGreaterThan(10);
    expect(documented).toEqual(routes);
  });

  it("every component schema compiles (JSON Schema 2020-12) and every $ref resolves", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormatsModule as unknown as (a: Ajv2020) => Ajv2020)(ajv);
    ajv.addSchema({ $id: "openapi.json", components: doc.components });
    for (const name of Object.keys(doc.components.schemas)) {
      expect(() => ajv.compile({ $ref: `openapi.json#/components/schemas/${name}` }), name).not.toThrow();
    }
  });

  it("request bodies come from schemas/ and answers name their statuses", () => {
    const crawl = doc.paths["/v2/crawl"]?.post as { requestBody: unknown; responses: Record<string, unknown> };
    expect(crawl.requestBody).toMatchObject({ required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/crawl-request" } } } });
    expect(Object.keys(crawl.responses)).toEqual(expect.arrayContaining(["200", "400"]));
    expect(doc.components.schemas["crawl-request"]).toMatchObject({ type: "object", properties: { url: expect.anything() } });
  });

  it("every link names an operation of the document", () => {
    const ids = new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => (o as { operationId: string }).operationId)));
    const links = Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((o) => Object.values((o as { responses: Record<string, { links?: Record<string, { operationId: string }> }> }).responses).flatMap((r) => Object.values(r.links ?? {}))));
    expect(links.length).toBeGreaterThan(0);
    for (const l of links) expect(ids, l.operationId).toContain(l.operationId);
  });

  it("request examples are valid bodies", async () => {
    const { validator } = await import("../../schemas/index.ts");
    const { routeDocs } = await import("./routes.ts");
    for (const r of routeDocs.filter((x) => x.example)) expect(validator(r.body as never)(r.example), r.path).toBe(true);
  });

  it("declares document.changeTracking and document.branding (not in document.schema.json: the topics' schemas stay compatible)", () => {
    const document = doc.components.schemas.document as { properties: Record<string, { $ref?: string }> };
    expect(document.properties.changeTracking?.$ref).toBe("#/components/schemas/change-tracking");
    expect(document.properties.branding?.$ref).toBe("#/components/schemas/branding");
    expect(doc.components.schemas.branding).toMatchObject({ required: ["colorScheme", "fonts", "colors", "typography"] });
  });
});
