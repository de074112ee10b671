// readCgroup and the load sampler against cgroup file trees written to a temporary directory (v2 and v1 layouts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readCgroup } from "./cgroup.ts";
import { loadSource, systemSampler } from "./load-guard.ts";

const root = mkdtempSync(join(tmpdir(), "trawl-cgroup-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function tree(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("readCgroup", () => {
  it("cgroup v2 with limits: CPU share over the quota, memory over memory.max without inactive file cache", () => {
    const mount = tree("v2", {
      "cgroup.controllers": "cpu memory",
      "app/cpu.max": "200000 100000\n",
      "app/cpu.stat": "usage_usec 5000000\nuser_usec 4000000\n",
      "app/memory.max": "1073741824\n",
      "app/memory.current": "805306368\n",
      "app/memory.stat": "anon 500\ninactive_file 268435456\n",
    });
    const cg = readCgroup("0::/app\n", mount);
    expect(cg?.cpuLimitCores).toBe(2);
    expect(cg?.memoryLimitBytes).toBe(1073741824);
    expect(loadSource(cg)).toEqual({ cpu: "cgroup", ram: "cgroup" });
    let clock = 0;
    const sample = systemSampler(cg, () => clock);
    // one second later the cgroup has used 1 CPU-second more: half of its 2 CPUs
    writeFileSync(join(mount, "app/cpu.stat"), "usage_usec 6000000\n");
    clock = 1000;
    const s = sample();
    expect(s.cpu).toBeCloseTo(0.5, 5);
    expect(s.ram).toBeCloseTo(0.5, 5);
  });

  it("cgroup v2 without limits, and a cgroup namespace (path not under the mount): the machine", () => {
    const mount = tree("v2-free", { "cgroup.controllers": "cpu memory", "cpu.max": "max 100000\n", "memory.max": "max\n", "memory.current": "1000\n" });
    const cg = readCgroup("0::/not/here\n", mount);
    expect(cg?.cpuLimitCores).toBeNull();
    expect(cg?.memoryLimitBytes).toBeNull();
    expect(loadSource(cg)).toEqual({ cpu: "machine", ram: "machine" });
  });

  it("cgroup v1 (hybrid): cfs quota, cpuacct.usage in ns, memory.limit_in_bytes; the 2^63 'no limit' is no limit", () => {
    const mount = tree("v1", {
      "cpu/job/cpu.cfs_quota_us": "50000\n", "cpu/job/cpu.cfs_period_us": "100000\n",
      "cpuacct/job/cpuacct.usage": "2000000000\n",
      "memory/job/memory.limit_in_bytes": "536870912\n", "memory/job/memory.usage_in_bytes": "268435456\n", "memory/job/memory.stat": "total_inactive_file 0\n",
    });
    const cg = readCgroup("4:memory:/job\n3:cpu:/job\n2:cpuacct:/job\n0::/\n", mount);
    expect(cg?.cpuLimitCores).toBe(0.5);
    expect(cg?.cpuUsageUs()).toBe(2_000_000);
    expect(cg?.memoryLimitBytes).toBe(536870912);
    expect(cg?.memoryUsageBytes()).toBe(268435456);
    const free = tree("v1-free", { "memory/memory.limit_in_bytes": "9223372036854771712\n", "cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n" });
    expect(loadSource(readCgroup("4:memory:/x\n3:cpu,cpuacct:/\n", free))).toEqual({ cpu: "machine", ram: "machine" });
  });

  it("no cgroup file system: the machine", () => {
    expect(readCgroup(null, root)).toBeNull();
    expect(loadSource(null)).toEqual({ cpu: "machine", ram: "machine" });
  });
});
