// x-idempotency-key on POST /v2/crawl and /v2/batch/scrape: a key already used by the team -> 409, as the anchor does.
// Keys are kept in the CrawlStore (both modes) for the retention period.
import type { Context } from "koa";
import type { ApiDeps } from "./deps.ts";
import { apiError } from "./errors.ts";
import { invalidField } from "../pipeline/runtime/errors.ts";

const MAX_KEY = 256;

/** Claims the request's idempotency key, if it has one; throws 409 when the key was used before. */
export async function claimIdempotencyKey(ctx: Context, deps: Pick<ApiDeps, "store" | "clock">): Promise<void> {
  const raw = ctx.get("x-idempotency-key");
  if (!ctx.headers["x-idempotency-key"]) return;
  const key = raw.trim();
  if (key === "" || key.length > MAX_KEY) throw invalidField(["x-idempotency-key"], `The x-idempotency-key header must be 1 to ${MAX_KEY} characters`);
  const fresh = await deps.store.claimIdempotencyKey(ctx.state.teamId, key, deps.clock.now());
  if (!fresh) throw apiError(409, "Idempotency key already used");
}
