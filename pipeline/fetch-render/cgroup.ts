// The process's own CPU and memory share from its cgroup (v2: cpu.max, cpu.stat, memory.max, memory.current;
// v1: cpu.cfs_quota_us/cfs_period_us, cpuacct.usage, memory.limit_in_bytes/usage_in_bytes). A limit is used only
// when one is set: a container with 2 CPUs on a 64-core host is "busy" when it uses its 2, whatever the neighbours do.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface Cgroup {
  /** CPUs the cgroup may use (quota / period), or null when not limited */
  cpuLimitCores: number | null;
  /** CPU time used by the cgroup so far, microseconds */
  cpuUsageUs(): number | null;
  /** memory limit in bytes, or null when not limited */
  memoryLimitBytes: number | null;
  /** memory in use (without reclaimable file cache), bytes */
  memoryUsageBytes(): number | null;
}

const read = (file: string): string | null => {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return null; // absent controller or file: that limit is treated as unset
  }
};
const num = (text: string | null): number | null => (text !== null && /^\d+$/.test(text) ? Number(text) : null);
const statField = (text: string | null, field: string): number | null => num(new RegExp(`^${field} (\\d+)$`, "m").exec(text ?? "")?.[1] ?? null);
/** v1 reports "no limit" as a huge number near 2^63 */
const limited = (bytes: number | null): number | null => (bytes !== null && bytes < 2 ** 60 ? bytes : null);

/** The cgroup directory of a controller: the process's path under the mount, or the mount itself (a cgroup namespace). */
function dirOf(mount: string, path: string): string {
  const own = join(mount, path);
  return existsSync(own) ? own : mount;
}

/**
 * Reads the cgroup of this process. `procCgroup` is the text of /proc/self/cgroup, `root` the cgroup mount
 * (/sys/fs/cgroup); both are parameters for tests. Returns null when no cgroup file system is readable.
 */
export function readCgroup(procCgroup: string | null = read("/proc/self/cgroup"), root = "/sys/fs/cgroup"): Cgroup | null {
  if (procCgroup === null) return null;
  const lines = procCgroup.split("\n").map((l) => l.split(":"));
  const v1 = new Map<string, string>();
  for (const [, controllers = "", path = ""] of lines) for (const c of controllers.split(",")) if (c) v1.set(c, path);
  const unifiedPath = lines.find(([id, controllers]) => id === "0" && controllers === "")?.[2];
  // cgroup v2: the unified hierarchy at the mount (pure v2) or at <mount>/unified (hybrid), with the cpu/memory files
  if (unifiedPath !== undefined && v1.size === 0) {
    const mount = existsSync(join(root, "cgroup.controllers")) ? root : join(root, "unified");
    const dir = dirOf(mount, unifiedPath);
    const [quota, period] = (read(join(dir, "cpu.max")) ?? "max").split(/\s+/);
    const cpuLimitCores = quota && quota !== "max" && Number(period) > 0 ? Number(quota) / Number(period) : null;
    return {
      cpuLimitCores,
      cpuUsageUs: () => statField(read(join(dir, "cpu.stat")), "usage_usec"),
      memoryLimitBytes: limited(num(read(join(dir, "memory.max")))),
      memoryUsageBytes: () => {
        const current = num(read(join(dir, "memory.current")));
        return current === null ? null : current - (statField(read(join(dir, "memory.stat")), "inactive_file") ?? 0);
      },
    };
  }
  if (v1.size === 0) return null;
  const cpuDir = dirOf(join(root, "cpu"), v1.get("cpu") ?? "/");
  const acctDir = dirOf(join(root, "cpuacct"), v1.get("cpuacct") ?? "/");
  const memDir = dirOf(join(root, "memory"), v1.get("memory") ?? "/");
  const quota = Number(read(join(cpuDir, "cpu.cfs_quota_us")) ?? -1);
  const period = Number(read(join(cpuDir, "cpu.cfs_period_us")) ?? 0);
  return {
    cpuLimitCores: quota > 0 && period > 0 ? quota / period : null,
    cpuUsageUs: () => {
      const ns = num(read(join(acctDir, "cpuacct.usage")));
      return ns === null ? null : ns / 1000;
    },
    memoryLimitBytes: limited(num(read(join(memDir, "memory.limit_in_bytes")))),
    memoryUsageBytes: () => {
      const usage = num(read(join(memDir, "memory.usage_in_bytes")));
      return usage === null ? null : usage - (statField(read(join(memDir, "memory.stat")), "total_inactive_file") ?? 0);
    },
  };
}
