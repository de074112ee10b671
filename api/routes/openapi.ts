// GET /v2/openapi.json: the OpenAPI 3.1 document of this API (built once from the route table and schemas/).
import Router from "@koa/router";
import { buildOpenApiDocument } from "../openapi/document.ts";

export function openApiRoutes(): Router {
  const router = new Router();
  let doc: string | undefined;
  router.get("/v2/openapi.json", (ctx) => {
    doc ??= JSON.stringify(buildOpenApiDocument());
    ctx.type = "application/json";
    ctx.body = doc;
  });
  return router;
}
