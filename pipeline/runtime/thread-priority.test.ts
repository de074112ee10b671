import { existsSync, readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BACKGROUND_THREAD_NICE, lowerThreads } from "./thread-priority.ts";

const niceOf = (tid: string) => {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]); // field 19: nice
};

describe.skipIf(!existsSync("/proc/self/task"))("lowerThreads", () => {
  it("lowers V8's platform threads of this process and leaves the main thread alone", () => {
    const v8 = readdirSync("/proc/self/task").filter((t) => readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim() === "V8Worker");
    expect(v8.length).toBeGreaterThan(0);
    const main = niceOf(String(process.pid));
    expect(lowerThreads()).toBe(v8.length);
    for (const tid of v8) expect(niceOf(tid)).toBeGreaterThanOrEqual(Math.max(main, BACKGROUND_THREAD_NICE));
    expect(niceOf(String(process.pid))).toBe(main);
  });
});
