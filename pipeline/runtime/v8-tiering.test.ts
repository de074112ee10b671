import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EFFICIENCY_FLAGS } from "./v8-tiering.ts";

// A child process with V8's test intrinsics calls a function with a loop 8,000 times after setV8EfficiencyMode, then
// reports whether TurboFan compiled it and whether efficiency mode is on in the main isolate and in a worker thread
// started afterwards (the convert workers). setFlagsFromString ignores a flag it does not know, so this fails if V8
// drops or renames one of them.
const script = (on: boolean) => `
  const { setV8EfficiencyMode } = await import(${JSON.stringify(join(import.meta.dirname, "v8-tiering.ts"))});
  const { Worker } = await import("node:worker_threads");
  setV8EfficiencyMode(${on}, { cpuS: 0 });
  const hot = new Function("n", "let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s;");
  for (let i = 0; i < 8000; i++) hot(200);
  const isEfficient = new Function("return %IsEfficiencyModeEnabled()");
  const turbofan = new Function("f", "return %ActiveTierIsTurbofan(f)");
  // V8 compiles on a helper thread: wait for its pending jobs (however loaded the machine), then call again to install
  const waitForCompiles = new Function("%WaitForBackgroundOptimization()");
  for (let i = 0; i < 50 && !turbofan(hot); i++) { waitForCompiles(); hot(200); }
  const inWorker = await new Promise((resolve, reject) => {
    const w = new Worker("import { parentPort } from 'node:worker_threads'; parentPort.postMessage(new Function('return %IsEfficiencyModeEnabled()')())", { eval: true });
    w.once("message", resolve);
    w.once("error", reject);
  });
  console.log(JSON.stringify({ turbofan: turbofan(hot), main: isEfficient(), inWorker }));
`;

const run = (on: boolean) =>
  JSON.parse(execFileSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", script(on)], { encoding: "utf8" })) as {
    turbofan: boolean; main: boolean; inWorker: boolean;
  };

describe("setV8EfficiencyMode", () => {
  it("keeps a function called fewer than 15,000 times off TurboFan, in the main thread and in workers started later", () => {
    const on = run(true);
    expect(on).toMatchObject({ turbofan: false, main: true, inWorker: true });
  });

  it("sets only flags this Node's V8 knows (setFlagsFromString would ignore a renamed one without a word)", () => {
    const known = execFileSync(process.execPath, ["--v8-options"], { encoding: "utf8" });
    for (const flag of EFFICIENCY_FLAGS) expect(known).toContain(`  ${flag.replace(/^--no-/, "--")} (`);
  });

  it("hands over to V8's own tiering once the process has used its warm-up CPU (V8_EFFICIENCY_CPU_S)", () => {
    const out = execFileSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", `
      const { setV8EfficiencyMode } = await import(${JSON.stringify(join(import.meta.dirname, "v8-tiering.ts"))});
      const isEfficient = new Function("return %IsEfficiencyModeEnabled()");
      const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
      const budget = cpu() + 0.3;
      setV8EfficiencyMode(true, { cpuS: budget, checkMs: 20 });
      await new Promise((r) => setTimeout(r, 60));
      const before = isEfficient();
      const until = cpu() + 0.4;
      while (cpu() < until); // the process's CPU passes the budget
      await new Promise((r) => setTimeout(r, 60));
      console.log(JSON.stringify({ before, after: isEfficient() }));
    `], { encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ before: true, after: false });
  });

  it("leaves V8's own tiering when off: the same function goes to TurboFan", () => {
    const off = run(false);
    expect(off).toMatchObject({ turbofan: true, main: false, inWorker: false });
  });
});
