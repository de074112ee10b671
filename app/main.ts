// `trawl <role> | crawl | scrape | config`: the command line. Parses the configuration, starts the roles, and stops
// them on SIGTERM/SIGINT after draining in-flight work.
import { configTable, ConfigError, loadConfig, type Config } from "../pipeline/runtime/config.ts";
import { createLogger, type Logger } from "../pipeline/runtime/logger.ts";
import { errorCode } from "../pipeline/runtime/errors.ts";
import { roles as roleDescriptions } from "../pipeline/topology.ts";
import { ROLES, start, type RoleName, type Running } from "./start.ts";
import { captureStatements } from "../pipeline/store/sql-capture.ts";

/** `trawl --help`: the commands, then every role as pipeline/topology.ts declares it. */
export function usage(): string {
  const others = ROLES.filter((r) => r !== "api").join(",");
  return `usage: trawl <role>[,<role>...] | trawl crawl <url> [options] | trawl scrape <url>

commands:
  crawl <url>    crawl a site to files, in this process, no server needed (trawl crawl --help)
  scrape <url>   print one page's document as JSON
  keys ...       API keys of teams: create, list, revoke (trawl keys --help)
  teams ...      teams: list, credits, concurrency
  config         print the configuration variables as a markdown table

roles:
  all            every role in one process (add --embedded: no Kafka, no ClickHouse; npm start runs this)
  a,b,...        these roles in one process (cluster mode), e.g. the API alone and every other role in a second
                 process: trawl api & trawl ${others}
${ROLES.map((r) => `  ${r.padEnd(14)} ${roleDescriptions[r]}`).join("\n")}

Configuration comes from environment variables: trawl config, or docs/configuration.md.`;
}

/** `all`, one role, or several joined by commas (`frontier,fetch-render,convert`); a message when one is unknown. */
export function parseRoles(arg: string): RoleName[] | string {
  if (arg === "all") return [...ROLES];
  const names = [...new Set(arg.split(","))];
  const unknown = names.filter((n) => !ROLES.includes(n as RoleName));
  if (unknown.length > 0) return `unknown role ${unknown.map((n) => `"${n}"`).join(", ")}`;
  return ROLES.filter((r) => names.includes(r)); // in start order, whatever order they were given in
}

export async function main(argv: string[]): Promise<void> {
  // every distinct SQL statement sent to ClickHouse, appended to this file (the current-engine check: scripts/chdb.sh)
  if (process.env.TRAWL_SQL_CAPTURE) captureStatements(process.env.TRAWL_SQL_CAPTURE);
  const embedded = argv.includes("--embedded");
  argv = argv.filter((a) => a !== "--embedded");
  const role = argv[0];
  if (!role || role === "--help" || role === "-h" || role === "help") {
    console.log(usage());
    return;
  }
  if (role === "config") {
    console.log(configTable());
    return;
  }
  if (role === "keys" || role === "teams") {
    process.exitCode = await (await import("./commands/keys-command.ts")).keysCommand(role, argv.slice(1), process.env, embedded);
    return;
  }
  if (role === "crawl" || role === "scrape") {
    const command = role === "crawl" ? (await import("./commands/crawl-command.ts")).crawlCommand : (await import("./commands/scrape-command.ts")).scrapeCommand;
    process.exitCode = await command(argv.slice(1), process.env);
    return;
  }
  const roles = parseRoles(role);
  if (typeof roles === "string") {
    console.error(`${roles}\n\n${usage()}`);
    process.exitCode = 2;
    return;
  }
  let config: Config;
  try {
    config = loadConfig(process.env, embedded ? { mode: "embedded" } : {});
  } catch (err) {
    console.error((err as Error).message);
    process.exitCode = 2;
    return;
  }
  const log = createLogger(config.logLevel, { role });
  routeProcessWarnings(log);
  let running: Running;
  try {
    running = await start(roles, config, log);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exitCode = 2;
      return;
    }
    log.fatal({ err, code: errorCode(err) }, `could not start: ${(err as Error).message}`);
    // at once: clients still retrying in the background (the Kafka client's own reconnects) would keep the process alive
    process.exit(1);
  }
  const shutdown = (signal: string) => {
    log.info({ signal }, "signal received");
    running.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
}

/**
 * Node's process warnings go to the structured log instead of bare stderr lines. Two come from dependencies and are
 * harmless, so they are logged at debug: a negative timer delay (TimeoutNegativeWarning, Node clamps it to 1 ms; the
 * previous Kafka client set one) and the `request` package under `clickhouse` calls the deprecated `util.isArray`.
 */
function routeProcessWarnings(log: Logger): void {
  process.removeAllListeners("warning");
  process.on("warning", (w: Error & { code?: string }) => {
    const known = w.name === "TimeoutNegativeWarning" || w.code === "DEP0044";
    log[known ? "debug" : "warn"]({ warning: w.name, code: w.code, detail: w.message }, "node process warning");
  });
}
