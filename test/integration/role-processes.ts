// Trawl's roles as separate child processes (`node bin/trawl.js <role>`, cluster mode), as a deployment runs them:
// each can be killed with SIGKILL and started again. Output goes to one log file per process, shown on failure.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { join } from "node:path";

const bin = join(import.meta.dirname, "..", "..", "bin", "trawl.js");

/**
 * The settings that give a cluster of role processes Kafka topics, consumer groups and a ClickHouse database of their
 * own on shared servers (named by `tag`), for runs beside others on one Kafka and one ClickHouse.
 */
export function isolatedCluster(tag: string, kafkaBrokers: string, clickhouseUrl: string): Record<string, string> {
  return {
    TRAWL_MODE: "cluster",
    KAFKA_BROKERS: kafkaBrokers,
    CLICKHOUSE_URL: clickhouseUrl,
    CLICKHOUSE_DATABASE: `trawl_${tag}`,
    KAFKA_TOPIC_PREFIX: `${tag}.`,
    KAFKA_GROUP_PREFIX: `${tag}.`,
  };
}

export interface RoleProcess {
  role: string;
  name: string;
  child: ChildProcess;
  log: string;
  /** stopped by `stop` (SIGTERM): its exit is not a crash */
  stopped?: boolean;
}

export class RoleProcesses {
  readonly all: RoleProcess[] = [];
  private readonly env: Record<string, string>;
  private readonly logDir: string;
  private readonly bin: string;
  private started = 0;

  /** `trawlBin`: another checkout's bin/trawl.js (an older release, for an upgrade run); default this one's. */
  constructor(env: Record<string, string>, logDir: string, trawlBin = bin) {
    this.env = env;
    this.logDir = logDir;
    this.bin = trawlBin;
  }

  /** Starts replica `index` of `role` (a restart of a killed replica reuses its name, with a new log file). */
  spawn(role: string, index = 0, extraEnv: Record<string, string> = {}): RoleProcess {
    const name = `${role}-${index}`;
    const log = join(this.logDir, `${name}.${this.started++}.log`);
    const out = createWriteStream(log);
    // Node 24 runs the TypeScript sources; process.execPath is the node devDependency's binary under npm/npx
    const child = spawn(process.execPath, [this.bin, role], { env: { ...process.env, ...this.env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    const p = { role, name, child, log };
    this.all.push(p);
    return p;
  }

  live(name: string): RoleProcess | undefined {
    return this.all.find((p) => p.name === name && p.child.exitCode === null && p.child.signalCode === null);
  }

  /** kill -9: no drain, no commit, no goodbye to the group. */
  async kill9(name: string): Promise<void> {
    const p = this.live(name);
    if (!p) throw new Error(`${name} is not running`);
    const exited = new Promise<void>((resolve) => p.child.once("exit", () => resolve()));
    p.child.kill("SIGKILL");
    await exited;
  }

  /** SIGTERM, as an orchestrator stops a replica (a graceful drain), and the exit. */
  async stop(name: string): Promise<void> {
    const p = this.live(name);
    if (!p) throw new Error(`${name} is not running`);
    const exited = new Promise<void>((resolve) => p.child.once("exit", () => resolve()));
    p.stopped = true;
    p.child.kill("SIGTERM");
    await exited;
  }

  /** Processes that exited without being killed by us, with the end of their logs. */
  crashed(): string[] {
    return this.all
      .filter((p) => p.child.exitCode !== null && !p.stopped)
      .map((p) => `${p.name} exited with ${p.child.exitCode}:\n${tail(p.log)}`);
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      this.all.filter((p) => p.child.exitCode === null && p.child.signalCode === null).map((p) => {
        const exited = new Promise<void>((resolve) => p.child.once("exit", () => resolve()));
        p.child.kill("SIGKILL");
        return exited;
      }),
    );
  }

  /** Lines of every log that contain `text`. */
  count(text: string): number {
    return this.all.reduce((n, p) => n + read(p.log).split("\n").filter((l) => l.includes(text)).length, 0);
  }

  /** The last lines of every log, for a failure message. */
  logs(lines = 15): string {
    return this.all.map((p) => `--- ${p.name} (${p.log})\n${tail(p.log, lines)}`).join("\n");
  }
}

function read(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return ""; // the process has not written yet
  }
}

function tail(file: string, lines = 30): string {
  return read(file).trimEnd().split("\n").slice(-lines).join("\n") || "(no log)";
}
