// `npm run bench [-- name ...]`: runs benchmarks, prints one table, writes bench/results/<date>-<name>.json.
// Benchmarks so far: frontier (memory per URL of the crawl state), embedded (end-to-end crawl of a synthetic site).
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";

const here = import.meta.dirname;
const node = process.execPath;
const benches: Record<string, { script: string; args: string[]; describe: string }> = {
  frontier: { script: "frontier-memory.ts", args: ["200000"], describe: "frontier state, 200,000 URLs" },
  embedded: { script: "embedded-memory.ts", args: ["1000"], describe: "embedded mode, 1,000-page synthetic site through the API" },
};
const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(benches);
const commit = (() => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
})();
const date = new Date().toISOString().slice(0, 10);
mkdirSync(join(here, "results"), { recursive: true });
const rows: string[] = [];
for (const name of wanted) {
  const b = benches[name];
  if (!b) throw new Error(`unknown benchmark ${name}; known: ${Object.keys(benches).join(", ")}`);
  const out = execFileSync(node, ["--expose-gc", join(here, b.script), ...b.args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const result = JSON.parse(out.trim().split("\n").at(-1) as string);
  const record = { name, describe: b.describe, date: new Date().toISOString(), commit, cores: cpus().length, node: process.version, result };
  writeFileSync(join(here, "results", `${date}-${name}.json`), JSON.stringify(record, null, 2) + "\n");
  rows.push(`| ${name} | ${b.describe} | ${Object.entries(result).map(([k, v]) => `${k}=${v}`).join(", ")} |`);
}
console.log(["| bench | what | result |", "|---|---|---|", ...rows].join("\n"));
