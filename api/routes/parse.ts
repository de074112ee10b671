// POST /v2/parse (Firecrawl v2): a multipart/form-data upload with a `file` part and an optional `options` part (JSON:
// the scrape options a file can have) -> the file as a document, through the scrape use case without a fetch.
import Router from "@koa/router";
import type { Middleware } from "koa";
import { randomUUID } from "node:crypto";
import type { ScrapeOptions } from "../../schemas/index.ts";
import type { ApiDeps } from "../deps.ts";
import { apiError, badRequest, HttpError } from "../errors.ts";
import { parseClientJson, readBytes } from "../body.ts";
import { validateBody } from "../validate.ts";
import { checkJobFields, scrapeSettings } from "../../pipeline/usecases/request-options.ts";
import { parseFile, UnsupportedFileError } from "../../pipeline/usecases/parse-file.ts";
import { documentTokens } from "../../pipeline/store/crawl-store.ts";
import { errorCode, errorMessage, PageError } from "../../pipeline/runtime/errors.ts";
import { UNLIMITED, withCreditCap } from "../../pipeline/usecases/credit-reservations.ts";

/** Scrape options a file cannot have: they ask for a browser, a location or the page cache (the SDK refuses them too). */
const NOT_FOR_FILES = ["waitFor", "actions", "location", "mobile", "maxAge", "minAge", "storeInCache", "lockdown"] as const;
/** Multipart framing and the options part, on top of the file. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;

const unsupported = (path: (string | number)[], message: string) =>
  apiError(400, message, { code: "PARSE_UNSUPPORTED_OPTIONS", details: [{ code: "custom", path, message }] });

/** The options part: JSON, the scrape options of a file, nothing a file cannot have. */
function parseOptions(text: string | File | null): ScrapeOptions {
  if (text === null) return {};
  if (typeof text !== "string") throw badRequest([{ code: "invalid_type", path: ["options"], message: "options must be a JSON text part, not a file" }]);
  const raw = parseClientJson(text); // under the nesting limit of every JSON body (checked before parsing)
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw badRequest([{ code: "invalid_type", path: ["options"], message: "options must be a JSON object" }]);
  const { origin: _origin, integration, zeroDataRetention, ...rest } = raw as Record<string, unknown>;
  checkJobFields({ zeroDataRetention: zeroDataRetention as boolean | undefined, integration: integration as string | undefined });
  for (const field of NOT_FOR_FILES) if (rest[field] !== undefined) throw unsupported([field], `parse does not support ${field}: a file is converted as uploaded`);
  if (rest.proxy !== undefined && rest.proxy !== "basic" && rest.proxy !== "auto") throw unsupported(["proxy"], "parse only supports proxy values of 'basic' or 'auto'");
  const options = validateBody<ScrapeOptions>("scrape-options", rest);
  (options.formats ?? []).forEach((f, i) => {
    const type = typeof f === "string" ? f : f.type;
    if (type.startsWith("screenshot") || type === "branding") throw unsupported(["formats", i], `parse does not support the ${type.startsWith("screenshot") ? "screenshot" : "branding"} format: there is no page to render`);
  });
  return options;
}

/** Seconds a client refused for PARSE_MAX_CONCURRENT is told to wait (a conversion takes up to CONVERT_TIMEOUT_MS). */
const BUSY_RETRY_AFTER_S = 1;

/**
 * At most `max` uploads held at once by this process, from their first byte read to their answer (the body, its
 * multipart copy and the conversion): one more is refused at once with 503 PARSE_BUSY and Retry-After, before its
 * body is read, so that concurrent large uploads cannot fill the memory. Refused rather than queued: a queue would
 * hold the client's connection for as long as the uploads before it take to convert (up to CONVERT_TIMEOUT_MS each).
 */
function uploadSlots(max: number): Middleware {
  let held = 0;
  return async (ctx, next) => {
    if (!ctx.is("multipart/form-data")) return next(); // refused by the route (415), nothing held
    if (held >= max) {
      throw new HttpError(503, {
        success: false, code: "PARSE_BUSY",
        error: `This server is converting as many uploads as it takes at once (PARSE_MAX_CONCURRENT=${max}); retry after ${BUSY_RETRY_AFTER_S}s.`,
      }, { "Retry-After": String(BUSY_RETRY_AFTER_S) });
    }
    held++;
    try {
      await next();
    } finally {
      held--;
    }
  };
}

/** The status of an upload whose conversion failed: too slow 408, too heavy for a worker's heap 413, else 500. */
function failureStatus(code: string): number {
  if (code === "SCRAPE_TIMEOUT" || code === "SCRAPE_CONVERT_TIMEOUT") return 408;
  if (code === "SCRAPE_CONVERT_OUT_OF_MEMORY") return 413;
  return 500;
}

export function parseRoutes(deps: ApiDeps): Router {
  const { config } = deps;
  const router = new Router();

  router.post("/v2/parse", uploadSlots(config.parseMaxConcurrent), async (ctx) => {
    if (!ctx.is("multipart/form-data")) {
      throw apiError(415, `Content-Type must be multipart/form-data with a "file" part (got ${JSON.stringify(ctx.get("content-type") || "none")})`, { code: "UNSUPPORTED_MEDIA_TYPE" });
    }
    const tooLarge = () => apiError(413, `Upload larger than ${config.parseMaxBytes} bytes (PARSE_MAX_BYTES)`, { code: "PAYLOAD_TOO_LARGE" });
    const slow = () => apiError(408, `Upload not received whole within ${config.parseReadTimeoutMs} ms (PARSE_READ_TIMEOUT_MS)`, { code: "UPLOAD_TIMEOUT" });
    const raw = await readBytes(ctx, config.parseMaxBytes + FORM_OVERHEAD_BYTES, tooLarge, { ms: config.parseReadTimeoutMs, error: slow });
    let form: FormData;
    try {
      form = await new Response(raw, { headers: { "content-type": ctx.get("content-type") } }).formData();
    } catch (err) {
      throw badRequest([{ code: "custom", path: [], message: `malformed multipart/form-data body: ${(err as Error).message}` }]);
    }
    const part = form.get("file");
    if (!(part instanceof File)) throw badRequest([{ code: "invalid_type", path: ["file"], message: "Required: a file part named \"file\"" }]);
    if (part.size === 0) throw badRequest([{ code: "custom", path: ["file"], message: "the file is empty" }]);
    if (part.size > config.parseMaxBytes) throw tooLarge();
    const settings = scrapeSettings(parseOptions(form.get("options")), []);
    const teamId: string = ctx.state.teamId;
    const file = { filename: part.name || "upload", contentType: part.type, bytes: Buffer.from(await part.arrayBuffer()) };
    // credits: 1 at least, reserved until billed; a PDF is parsed up to the pages the credits left pay for
    const held = (await deps.access?.reserve(teamId, 1)) ?? UNLIMITED;
    try {
      const { document, credits: cost } = await parseFile(deps, file, withCreditCap(settings, held.credits), settings.timeoutMs ?? config.fetchTimeoutMs);
      const tokens = documentTokens(document);
      const credits = await held.settle(cost, async (billed) => deps.authStore?.recordUsage([{ teamId, jobId: String(document.metadata.scrapeId ?? randomUUID()), credits: billed, ...(tokens ? { tokens } : {}), at: deps.clock.now() }]));
      document.metadata.creditsUsed = credits;
      deps.log.info({ scrapeId: document.metadata.scrapeId, bytes: file.bytes.length, credits }, "parsed");
      ctx.body = { success: true, data: document };
    } catch (err) {
      if (err instanceof UnsupportedFileError) throw apiError(415, err.message, { code: "SCRAPE_UNSUPPORTED_FILE_ERROR" });
      if (!(err instanceof PageError)) throw err;
      throw apiError(failureStatus(err.code), errorMessage(err), { code: errorCode(err) });
    } finally {
      held.release();
    }
  });

  return router;
}


