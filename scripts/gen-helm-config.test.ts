// The chart's values must carry exactly the configuration table: the generated block is up to date, and its
// config + secrets keys are the table's variables (the secret ones under secrets only).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { configVars } from "../pipeline/runtime/config.ts";
import { processors } from "../pipeline/topology.ts";
import { helmConfigBlock, VALUES_PATH, withGeneratedBlock } from "./gen-helm-config.ts";

describe("helm values vs the configuration table", () => {
  const text = readFileSync(VALUES_PATH, "utf8");

  it("the generated block is up to date (npm run gen:helm)", () => {
    expect(withGeneratedBlock(text)).toBe(text);
  });

  it("config and secrets hold exactly the table's variables", () => {
    const values = parse(text) as { config: Record<string, string>; secrets: Record<string, string> };
    const specs = Object.values(configVars) as { env: string; secret?: boolean }[];
    expect(Object.keys(values.config).sort()).toEqual(specs.filter((s) => !s.secret).map((s) => s.env).sort());
    expect(Object.keys(values.secrets).sort()).toEqual(specs.filter((s) => s.secret).map((s) => s.env).sort());
    for (const v of [...Object.values(values.config), ...Object.values(values.secrets)]) expect(typeof v).toBe("string");
  });

  it("the chart has a Deployment, on by default, for every role of the topology", () => {
    const values = parse(text) as { roles: Record<string, { enabled: boolean }> };
    const roles = new Set(Object.values(processors as Record<string, { role: string }>).map((p) => p.role));
    roles.add("api");
    expect(Object.keys(values.roles).sort()).toEqual([...roles].sort());
    // a role left off would leave its topic unconsumed (render.tasks: every page that needs a browser would wait)
    for (const role of roles) expect(values.roles[role]?.enabled, role).toBe(true);
  });

  it("a variable added to the table shows up as drift", () => {
    const stale = text.replace(/\n {2}LOG_LEVEL: .*\n/, "\n");
    expect(stale).not.toBe(text);
    expect(withGeneratedBlock(stale)).toBe(text);
    expect(helmConfigBlock()).toContain('  LOG_LEVEL: "info"');
  });
});
