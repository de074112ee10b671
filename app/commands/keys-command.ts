// `trawl keys create|list|revoke` and `trawl teams list|credits`: API keys and teams in Trawl's own store: DATA_DIR
// by default, as `npm start` (embedded), ClickHouse with --cluster or TRAWL_MODE=cluster. A created key is printed
// once and never stored.
import { existsSync, readdirSync } from "node:fs";
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { checkDataFormat } from "../../pipeline/runtime/data-format.ts";
import { retry } from "../../pipeline/runtime/retry.ts";
import type { AuthStore } from "../../pipeline/store/auth-store.ts";
import { ClickHouseAuthStore } from "../../pipeline/store/clickhouse-auth-store.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { safeOrigin } from "../../pipeline/store/clickhouse-tls.ts";
import { EmbeddedAuthStore } from "../../pipeline/store/embedded-auth-store.ts";
import { migrate } from "../../pipeline/store/migrations.ts";
import { createKey, ensureTeam, revokeKey } from "../../pipeline/usecases/api-keys.ts";

export const KEYS_HELP = `usage: trawl keys create --team NAME [--credits N] [--concurrency N] [--rate R] [--expires-days D] [--cluster]
       trawl keys list [--team NAME] [--cluster]
       trawl keys revoke KEY_ID|KEY [--cluster]
       trawl teams list [--cluster]
       trawl teams credits NAME N [--cluster]        (N = -1: unlimited)
       trawl teams concurrency NAME N [--cluster]    (N = 0: no limit)

Keys and teams live in Trawl's own store, the one the API reads: DATA_DIR by default, as \`npm start\` (embedded
mode: run it in the project's directory, where npm start keeps .trawl-data, or give the same DATA_DIR), or the ClickHouse of cluster mode
(CLICKHOUSE_URL) with --cluster or TRAWL_MODE=cluster (--embedded or TRAWL_MODE=embedded: DATA_DIR). --credits sets
the team's balance when the team is created; --concurrency how many of its jobs (crawls, batch scrapes) run at once,
the others wait (default TEAM_MAX_CONCURRENCY); --rate is requests per minute per key (0: no limit). A key is printed
once; only its hash is kept. Revocation takes effect within AUTH_CACHE_TTL_MS. The server needs
USE_DB_AUTHENTICATION=true to ask for keys.`;

/**
 * The mode whose store the command uses: --embedded / --cluster, else TRAWL_MODE when it is set, else embedded, the
 * default of `npm start` (a key written to ClickHouse while `npm start` serves from DATA_DIR was refused with no hint).
 */
export function keysMode(env: Record<string, string | undefined>, flags: { embedded: boolean; cluster: boolean }): { mode?: Config["mode"]; chosenBy: string } | string {
  if (flags.embedded && flags.cluster) return "--embedded and --cluster: give one of them";
  if (flags.embedded) return { mode: "embedded", chosenBy: "--embedded" };
  if (flags.cluster) return { mode: "cluster", chosenBy: "--cluster" };
  if (env.TRAWL_MODE !== undefined) return { chosenBy: `TRAWL_MODE=${env.TRAWL_MODE}` };
  return { mode: "embedded", chosenBy: "the default, as npm start" };
}

async function openAuthStore(config: Config, chosenBy: string): Promise<{ store: AuthStore; close(): Promise<void> }> {
  if (config.mode === "embedded") {
    const dir = resolve(config.dataDir);
    const fresh = !existsSync(dir) || readdirSync(dir).length === 0;
    await checkDataFormat(dir); // refuses a directory of a newer format; a new one is created in the current format
    const store = await EmbeddedAuthStore.open(dir, { repair: false });
    console.error(`store: DATA_DIR=${dir} (embedded mode: ${chosenBy}; --cluster or TRAWL_MODE=cluster: ClickHouse)`);
    if (fresh) console.error(`note: nothing was stored in ${dir} before: the Trawl that should accept these keys must run on this DATA_DIR (npm start uses .trawl-data in the project's directory)`);
    return { store, close: () => store.close() };
  }
  const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: config.clickhouseDatabase, caFile: config.clickhouseCaFile, cluster: config.clickhouseCluster, requestTimeoutMs: config.clickhouseRequestTimeoutMs });
  await retry(() => migrate(ch), { retries: 3, initialMs: 250, maxMs: 1000, retriable: () => true });
  console.error(`store: ClickHouse ${safeOrigin(config.clickhouseUrl)}, database ${config.clickhouseDatabase} (cluster mode: ${chosenBy}; --embedded: DATA_DIR, the store of npm start)`);
  return { store: new ClickHouseAuthStore(ch), close: async () => {} };
}

const date = (ms: number) => (ms ? new Date(ms).toISOString() : "-");

async function run(store: AuthStore, what: string, args: string[], values: Record<string, string | undefined>): Promise<number> {
  const now = Date.now();
  const int = (name: string, text: string | undefined, min: number): number | undefined => {
    if (text === undefined) return undefined;
    if (!/^-?\d+$/.test(text) || Number(text) < min) throw new Error(`--${name} must be an integer >= ${min}`);
    return Number(text);
  };
  const teams = await store.listTeams();
  const teamName = (id: string) => teams.find((t) => t.teamId === id)?.name ?? id;
  switch (what) {
    case "keys create": {
      if (!values.team) throw new Error("--team NAME is required");
      const days = int("expires-days", values["expires-days"], 1);
      const credits = int("credits", values.credits, -1);
      const ratePerMin = int("rate", values.rate?.replace(/\/min$/, ""), 0);
      const concurrency = int("concurrency", values.concurrency, 0);
      const { key, row, team } = await createKey(store, {
        teamName: values.team, ...(credits !== undefined ? { credits } : {}), ...(concurrency !== undefined ? { concurrency } : {}), ...(ratePerMin !== undefined ? { ratePerMin } : {}),
        ...(days !== undefined ? { expiresAt: now + days * 86_400_000 } : {}),
      }, now);
      console.log(key);
      console.error(`key ${row.keyId} for team ${team.name} (${team.teamId}); credits ${team.credits < 0 ? "unlimited" : team.credits}; rate ${row.ratePerMin || "unlimited"}/min; expires ${date(row.expiresAt)}. Shown once: store it now.`);
      return 0;
    }
    case "keys list": {
      const team = values.team ? teams.find((t) => t.name === values.team) : undefined;
      if (values.team && !team) throw new Error(`no team named ${values.team}`);
      const used = await store.lastUsed();
      console.log("key_id\tteam\tcreated\tlast_used\texpires\trevoked\trate_per_min");
      for (const k of await store.listKeys(team?.teamId)) {
        console.log([k.keyId, teamName(k.teamId), date(k.createdAt), date(used.get(k.keyId) ?? 0), date(k.expiresAt), date(k.revokedAt), k.ratePerMin || "-"].join("\t"));
      }
      return 0;
    }
    case "keys revoke": {
      const id = args[0]?.replace(/^fc-/, "").slice(0, 8);
      if (!id) throw new Error("give the key id (or the key) to revoke");
      const n = await revokeKey(store, id, now);
      console.log(n ? `revoked key ${id}` : `no active key ${id}`);
      return n ? 0 : 1;
    }
    case "teams list": {
      console.log("team_id\tname\tcredits\tcreated\tconcurrency");
      for (const t of teams) console.log([t.teamId, t.name, t.credits < 0 ? "unlimited" : t.credits, date(t.createdAt), t.concurrency === undefined ? "default" : t.concurrency || "unlimited"].join("\t"));
      return 0;
    }
    case "teams credits": {
      const [name, n] = args;
      if (!name || !teams.some((t) => t.name === name)) throw new Error(`no team named ${name ?? ""}`);
      const team = await ensureTeam(store, name, int("credits", n, -1) ?? -1, now);
      console.log(`team ${team.name}: credits ${team.credits < 0 ? "unlimited" : team.credits}`);
      return 0;
    }
    case "teams concurrency": {
      const [name, n] = args;
      if (!name || !teams.some((t) => t.name === name)) throw new Error(`no team named ${name ?? ""}`);
      const concurrency = int("concurrency", n, 0);
      if (concurrency === undefined) throw new Error("give the number of jobs the team may run at once (0: no limit)");
      const team = await ensureTeam(store, name, undefined, now, concurrency);
      console.log(`team ${team.name}: ${team.concurrency || "unlimited"} jobs at once (applies within AUTH_CACHE_TTL_MS)`);
      return 0;
    }
    default:
      throw new Error(`unknown command "${what}"`);
  }
}

export async function keysCommand(group: "keys" | "teams", argv: string[], env: Record<string, string | undefined>, embedded: boolean): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true,
      options: { cluster: { type: "boolean" }, team: { type: "string" }, credits: { type: "string" }, concurrency: { type: "string" }, rate: { type: "string" }, "expires-days": { type: "string" }, help: { type: "boolean", short: "h" } },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${KEYS_HELP}`);
    return 2;
  }
  if (parsed.values.help || parsed.positionals.length === 0) {
    console.log(KEYS_HELP);
    return parsed.values.help ? 0 : 2;
  }
  const mode = keysMode(env, { embedded, cluster: parsed.values.cluster === true });
  if (typeof mode === "string") {
    console.error(`${mode}\n\n${KEYS_HELP}`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig(env, mode.mode ? { mode: mode.mode } : {});
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const [sub, ...rest] = parsed.positionals;
  let opened;
  try {
    opened = await openAuthStore(config, mode.chosenBy);
  } catch (err) {
    const where = config.mode === "embedded" ? `DATA_DIR=${resolve(config.dataDir)}` : `ClickHouse at ${safeOrigin(config.clickhouseUrl)} (--embedded: DATA_DIR, the store of npm start)`;
    console.error(`could not open the store, ${where}: ${(err as Error).message}`);
    return 1;
  }
  const { store, close } = opened;
  try {
    return await run(store, `${group} ${sub}`, rest, parsed.values as Record<string, string | undefined>);
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${KEYS_HELP}`);
    return 2;
  } finally {
    await close();
  }
}
