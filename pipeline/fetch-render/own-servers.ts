// Trawl's own servers on this machine: the processes whose CPU the load guard counts as Trawl's, not a neighbour's.
// - The Chromium this process launched: Playwright starts it as a child of this process; a child whose executable is
//   Chromium's (CHROMIUM_PATH, or a binary named chrome/chromium/headless_shell: Debian's /usr/bin/chromium is a
//   script that execs /usr/lib/chromium/chromium) counts, with every process under it (zygotes, renderers, GPU).
//   Other children (a test's CPU hog, anything else) are neighbours.
// - Kafka, ClickHouse and the Schema Registry when they listen on this machine: the process holding a listening TCP
//   socket on the port of an address of KAFKA_BROKERS, CLICKHOUSE_URL or SCHEMA_REGISTRY_URL whose host is local
//   (/proc/net/tcp and tcp6 give the socket's inode, /proc/<pid>/fd the process that holds it).
// Linux only (/proc); elsewhere nothing is found and every other process is a neighbour. Only the processes this user
// may read are found (the same user, or root): a server run by another user, or behind a container's port proxy, stays
// a neighbour. `sameCgroup`: only processes in this process's cgroup count (the load is then the cgroup's, and a
// process outside it is not in that figure).
import { readFileSync, readlinkSync, realpathSync } from "node:fs";
import { readdir, readFile, readlink } from "node:fs/promises";
import { networkInterfaces } from "node:os";
import { basename } from "node:path";

/** USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux architecture Node runs on */
const TICKS_PER_S = 100;
/** Listening sockets are matched to processes again this often (a server restarted, or started after Trawl). */
const RESCAN_MS = 30_000;
/** The processes under this process's Chromium are looked up again this often (renderers come and go with pages). */
const TREE_MS = 5_000;

export interface Endpoint {
  host: string;
  port: number;
  /** the variable that names it (for the start log) */
  variable: string;
}

export interface OwnProcess {
  pid: number;
  /** "chromium", or the variable naming the server (KAFKA_BROKERS, CLICKHOUSE_URL, SCHEMA_REGISTRY_URL) */
  what: string;
}

/** The servers the configuration names, as host and port (a URL without a port: its scheme's). */
export function serverEndpoints(c: { kafkaBrokers: string; clickhouseUrl: string; schemaRegistryUrl: string }): Endpoint[] {
  const out: Endpoint[] = [];
  for (const broker of c.kafkaBrokers.split(",").map((b) => b.trim()).filter(Boolean)) {
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(broker);
    if (m) out.push({ host: m[1]!, port: Number(m[2]), variable: "KAFKA_BROKERS" });
  }
  const urls: [string, string][] = [...c.clickhouseUrl.split(",").map((u): [string, string] => [u.trim(), "CLICKHOUSE_URL"]), [c.schemaRegistryUrl, "SCHEMA_REGISTRY_URL"]];
  for (const [u, variable] of urls) {
    if (!u) continue;
    try {
      const url = new URL(u);
      out.push({ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || (url.protocol === "https:" ? 443 : 80)), variable });
    } catch {
      // the configuration checked it at start; a value that is not a URL names no server here
    }
  }
  return out;
}

/** Whether a host names this machine: localhost, a loopback address, or an address of one of its interfaces. */
export function isLocalHost(host: string, own = localAddresses()): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || /^127\./.test(h) || h === "::1" || h === "0.0.0.0" || h === "::" || own.has(h);
}

function localAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(a.address.toLowerCase());
  return out;
}

/** The listening sockets of /proc/net/tcp or tcp6 (state 0A): port and inode. */
export function parseListening(text: string): { port: number; inode: number }[] {
  const out: { port: number; inode: number }[] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== "0A") continue;
    const port = parseInt(f[1]!.split(":")[1] ?? "", 16);
    const inode = Number(f[9]);
    if (Number.isFinite(port) && inode > 0) out.push({ port, inode });
  }
  return out;
}

export interface ProcStat {
  ppid: number;
  /** CPU time of the process (every thread) and of its children it has waited for, seconds */
  cpuS: number;
  /** when it started, seconds after boot */
  startS: number;
}

/** /proc/<pid>/stat: fields after the command name (which may hold spaces and parentheses) */
export function parseStat(text: string): ProcStat | null {
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // f[0] is field 3 (state): ppid is field 4, utime..cstime 14..17, starttime 22
  const n = (field: number) => Number(f[field - 3]);
  const ticks = n(14) + n(15) + n(16) + n(17);
  if (!Number.isFinite(ticks) || !Number.isFinite(n(22))) return null;
  return { ppid: n(4), cpuS: ticks / TICKS_PER_S, startS: n(22) / TICKS_PER_S };
}

const read = (file: string): string | null => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null; // gone, or not ours to read
  }
};
const uptimeS = () => Number((read("/proc/uptime") ?? "0").split(" ")[0]) || 0;
const statOf = (pid: number) => {
  const text = read(`/proc/${pid}/stat`);
  return text === null ? null : parseStat(text);
};

/** Direct children of a process (every thread's), from /proc/<pid>/task/<tid>/children. */
async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const lists = await Promise.all(tasks.map((tid) => readFile(`/proc/${pid}/task/${tid}/children`, "utf8").catch(() => "")));
  return lists.flatMap((l) => l.split(" ").filter(Boolean).map(Number));
}

const exeOf = (pid: number): string | null => {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return null;
  }
};

/** The processes holding the given socket inodes (every readable process's open files; asynchronous: a JVM has thousands). */
async function holdersOf(inodes: Map<number, Endpoint>): Promise<OwnProcess[]> {
  const out: OwnProcess[] = [];
  if (inodes.size === 0) return out;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]); // another user's process, or gone
    for (const fd of fds) {
      const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => "");
      const m = /^socket:\[(\d+)\]$/.exec(target);
      const endpoint = m ? inodes.get(Number(m[1])) : undefined;
      if (endpoint) {
        out.push({ pid: Number(entry), what: endpoint.variable });
        break;
      }
    }
  }
  return out;
}

/**
 * Finds Trawl's own processes and measures their CPU. `cpuSecondsSince()` gives the CPU time they used since its
 * previous call (the first call: 0, it sets the baseline); a process that started since then counts from its start.
 */
export class OwnServers {
  private readonly endpoints: Endpoint[];
  private readonly chromium: string | null;
  private readonly cgroup: string | null;
  private servers: OwnProcess[] = [];
  private scannedAt = -Infinity;
  private readonly last = new Map<number, number>();
  private sampled = false;

  private readonly onFound: (servers: OwnProcess[]) => void;

  /** `onFound`: called after a look-up that found other server processes than the previous one (for the log). */
  constructor(opts: { endpoints: Endpoint[]; chromiumPath: string; sameCgroup?: boolean; now?: () => number; onFound?: (servers: OwnProcess[]) => void }) {
    this.onFound = opts.onFound ?? (() => {});
    this.endpoints = opts.endpoints.filter((e) => isLocalHost(e.host));
    let chromium: string | null = null;
    try {
      chromium = realpathSync(opts.chromiumPath);
    } catch {
      // no Chromium there: children are matched by name only
    }
    this.chromium = chromium;
    this.cgroup = opts.sameCgroup ? read("/proc/self/cgroup") : null;
    this.now = opts.now ?? (() => performance.now());
  }

  private readonly now: () => number;

  private isChromium(pid: number): boolean {
    const exe = exeOf(pid);
    if (exe === null) return false;
    return exe === this.chromium || /^(chrome|chromium|chromium-browser|headless_shell|chrome-headless-shell)$/.test(basename(exe));
  }

  /** Matches the configured ports' listening sockets to processes, in the background (the last result serves meanwhile). */
  private scanServers(): void {
    if (this.scanning || this.endpoints.length === 0) return;
    const ports = new Set(this.endpoints.map((e) => e.port));
    const inodes = new Map<number, Endpoint>();
    for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      for (const s of parseListening(read(file) ?? "")) {
        if (ports.has(s.port)) inodes.set(s.inode, this.endpoints.find((e) => e.port === s.port)!);
      }
    }
    const key = (list: OwnProcess[]) => list.map((p) => `${p.what}:${p.pid}`).sort().join(",");
    this.scanning = holdersOf(inodes)
      .catch(() => []) // no /proc: none
      .then((found) => {
        const changed = key(found) !== key(this.servers);
        this.servers = found;
        if (changed) this.onFound(found);
      })
      .finally(() => (this.scanning = null));
  }

  /** The scan under way, if any (tests wait for it). */
  scanning: Promise<unknown> | null = null;

  /** Trawl's own processes (besides this one): its Chromium's, looked up every TREE_MS, and its servers'. */
  processes(): OwnProcess[] {
    const now = this.now();
    if (now - this.scannedAt >= RESCAN_MS) {
      this.scannedAt = now;
      this.scanServers();
    }
    if (now - this.walkedAt >= TREE_MS && !this.walking) {
      this.walkedAt = now;
      const at = uptimeS();
      this.walking = this.walkChromium()
        .then((tree) => {
          this.chromiumTree = tree;
          this.previousWalkS = this.walkS;
          this.walkS = at;
        }, () => {})
        .finally(() => (this.walking = null));
    }
    const out = [...this.servers, ...this.chromiumTree];
    return this.cgroup === null ? out : out.filter((p) => read(`/proc/${p.pid}/cgroup`) === this.cgroup);
  }

  /** Every process under a child of this process that runs Chromium (asynchronous: a browser has hundreds of threads). */
  private async walkChromium(): Promise<OwnProcess[]> {
    const tree: OwnProcess[] = [];
    for (const child of await childrenOf(process.pid)) {
      if (!this.isChromium(child)) continue;
      const todo = [child];
      while (todo.length && tree.length < 10_000) {
        const pid = todo.pop()!;
        tree.push({ pid, what: "chromium" });
        todo.push(...(await childrenOf(pid)));
      }
    }
    return tree;
  }

  /** The walk under way, if any (tests wait for it). */
  walking: Promise<unknown> | null = null;
  private chromiumTree: OwnProcess[] = [];
  private walkedAt = -Infinity;
  /** uptime at the last walk of the Chromium tree and at the one before (a process started since counts from its start) */
  private walkS = 0;
  private previousWalkS = 0;

  /** CPU seconds Trawl's own other processes used since the previous call. */
  cpuSecondsSince(): number {
    const first = this.last.size === 0 && !this.sampled;
    this.sampled = true;
    let used = 0;
    const seen = new Set<number>();
    for (const { pid } of this.processes()) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      const s = statOf(pid);
      if (!s) continue;
      const before = this.last.get(pid) ?? (!first && this.previousWalkS > 0 && s.startS >= this.previousWalkS ? 0 : s.cpuS);
      used += Math.max(0, s.cpuS - before);
      this.last.set(pid, s.cpuS);
    }
    for (const pid of this.last.keys()) if (!seen.has(pid)) this.last.delete(pid);
    return used;
  }
}
