// Key management over HTTP for automation, behind the admin key: POST/GET /admin/<key>/keys, DELETE
// /admin/<key>/keys/<keyId>, GET /admin/<key>/teams. The same use cases as `trawl keys` / `trawl teams`.
import Router from "@koa/router";
import type { ApiDeps } from "../deps.ts";
import { apiError } from "../errors.ts";
import { adminKeyMatches } from "./admin.ts";
import { createKey, revokeKey } from "../../pipeline/usecases/api-keys.ts";
import { invalidField } from "../../pipeline/runtime/errors.ts";

const optionalInt = (body: Record<string, unknown>, name: string, min: number): number | undefined => {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) throw invalidField([name], `${name} must be an integer >= ${min}`);
  return v;
};

export function adminKeyRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const guard = (key: unknown) => {
    if (!adminKeyMatches(String(key), deps.config.adminKey) || !deps.authStore) throw apiError(404, "Not found");
    return deps.authStore;
  };

  router.post("/admin/:key/keys", async (ctx) => {
    const store = guard(ctx.params.key);
    const body = (ctx.state.body ?? {}) as Record<string, unknown>;
    if (typeof body.team !== "string") throw invalidField(["team"], "team (a name) is required");
    const credits = optionalInt(body, "credits", -1);
    const ratePerMin = optionalInt(body, "ratePerMin", 0);
    const expiresAt = optionalInt(body, "expiresAt", 1);
    const concurrency = optionalInt(body, "concurrency", 0);
    const { key, row, team } = await createKey(store, {
      teamName: body.team, ...(credits !== undefined ? { credits } : {}), ...(ratePerMin !== undefined ? { ratePerMin } : {}), ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
    }, deps.clock.now());
    deps.log.info({ keyId: row.keyId, teamId: team.teamId }, "api key created");
    ctx.body = { success: true, key, keyId: row.keyId, teamId: team.teamId, team: team.name };
  });

  router.get("/admin/:key/keys", async (ctx) => {
    const store = guard(ctx.params.key);
    const used = await store.lastUsed();
    ctx.body = {
      success: true,
      keys: (await store.listKeys()).map((k) => ({ keyId: k.keyId, teamId: k.teamId, createdAt: k.createdAt, lastUsedAt: used.get(k.keyId) ?? 0, expiresAt: k.expiresAt, revokedAt: k.revokedAt, ratePerMin: k.ratePerMin })),
    };
  });

  router.delete("/admin/:key/keys/:keyId", async (ctx) => {
    const store = guard(ctx.params.key);
    const revoked = await revokeKey(store, String(ctx.params.keyId), deps.clock.now());
    if (!revoked) throw apiError(404, "Key not found");
    deps.log.info({ keyId: ctx.params.keyId }, "api key revoked");
    ctx.body = { success: true, revoked };
  });

  router.get("/admin/:key/teams", async (ctx) => {
    const store = guard(ctx.params.key);
    ctx.body = { success: true, teams: (await store.listTeams()).map((t) => ({ teamId: t.teamId, name: t.name, credits: t.credits, concurrency: t.concurrency ?? null, createdAt: t.createdAt })) };
  });

  return router;
}
