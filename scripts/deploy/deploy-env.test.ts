// The variables the deploy artefacts give Trawl are the configuration table's (pipeline/runtime/config.ts), with values
// it accepts: the compose file's Trawl services (and its stand-ins' overrides), the image's ENV, the chart's values and
// the env its Deployments add. A variable renamed or removed from the table, or a value the table refuses, fails here
// (the chart's values are generated from the table: scripts/gen-helm-config.test.ts).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { configVars, loadConfig } from "../../pipeline/runtime/config.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const names = new Set((Object.values(configVars) as { env: string }[]).map((s) => s.env));
/** Read by Node itself, not by Trawl's table. */
const NOT_TRAWL = new Set(["NODE_ENV"]);
const unknown = (env: Record<string, string>) => Object.keys(env).filter((k) => !names.has(k) && !NOT_TRAWL.has(k));

/** Compose's interpolation with nothing set in the shell: `${X:-d}` and `${X-d}` give d, `${X:?msg}` a value the user must give. */
const interpolate = (value: unknown): string =>
  String(value).replace(/\$\{([A-Z0-9_]+)(?:(:?-)([^}]*)|(:?\?)[^}]*)?\}/g, (_m, _name, dash, def, need) => (dash ? def : need ? "set-by-the-user" : ""));

interface Service { image?: string; build?: unknown; command?: string[]; environment?: Record<string, unknown> }
const trawlServices = (file: string) => Object.entries((parse(read(file), { merge: true }) as { services: Record<string, Service> }).services)
  .filter(([, s]) => s.build !== undefined || s.image === "trawl:dev");
const envOf = (s: Service) => Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(v)]));

describe("the deploy artefacts give Trawl the variables of its configuration table", () => {
  const compose = trawlServices("deploy/compose.yaml");

  it("compose.yaml: every Trawl service's variables are in the table, and their values load", () => {
    expect(compose.map(([name]) => name)).toContain("api");
    for (const [name, s] of compose) {
      const env = envOf(s);
      expect({ service: name, unknown: unknown(env) }).toEqual({ service: name, unknown: [] });
      const embedded = s.command?.includes("--embedded") ?? false;
      expect(() => loadConfig(env, embedded ? { mode: "embedded" } : {}), name).not.toThrow();
    }
  });

  it("compose.standins.yaml: the stand-ins' overrides too", () => {
    const standins = parse(read("deploy/compose.standins.yaml"), { logLevel: "error" }) as { services: Record<string, Service> };
    const byName = new Map(compose);
    for (const [name, s] of Object.entries(standins.services).filter(([n]) => byName.has(n))) {
      const env = { ...envOf(byName.get(name) as Service), ...envOf(s) };
      expect({ service: name, unknown: unknown(env) }).toEqual({ service: name, unknown: [] });
      expect(() => loadConfig(env), name).not.toThrow();
    }
  });

  it("the image's ENV", () => {
    const dockerfile = read("deploy/Dockerfile").replace(/\\\n/g, " ");
    const env: Record<string, string> = {};
    for (const line of dockerfile.split("\n").filter((l) => /^ENV\s/.test(l))) {
      for (const m of line.slice(4).matchAll(/([A-Z][A-Z0-9_]*)=("[^"]*"|\S*)/g)) env[m[1] as string] = (m[2] as string).replace(/^"|"$/g, "");
    }
    expect(Object.keys(env)).toContain("TRAWL_MODE");
    expect(unknown(env)).toEqual([]);
    expect(() => loadConfig(env)).not.toThrow();
  });

  it("the chart: its values and values-dev.yaml's load, and its templates name no variable outside the table", () => {
    type Values = { config: Record<string, string>; secrets: Record<string, string> };
    const values = parse(read("helm/trawl/values.yaml")) as Values;
    const dev = parse(read("helm/trawl/values-dev.yaml")) as Values;
    expect(unknown({ ...dev.config, ...dev.secrets })).toEqual([]);
    expect(() => loadConfig({ ...values.config, ...values.secrets })).not.toThrow();
    expect(() => loadConfig({ ...values.config, ...dev.config, ...values.secrets, ...dev.secrets })).not.toThrow();
    const templates = ["deployments.yaml", "configmap.yaml", "secret.yaml", "dev-infra.yaml"].map((f) => read(`helm/trawl/templates/${f}`)).join("\n");
    // the env a Deployment adds (`- { name: CLICKHOUSE_CA_FILE, … }`) and the config values a template reads
    const deploymentEnv = [...read("helm/trawl/templates/deployments.yaml").matchAll(/\bname:\s*([A-Z][A-Z0-9_]+)\b/g)].map((m) => m[1] as string);
    const read_ = [...templates.matchAll(/\.Values\.(?:config|secrets)\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1] as string);
    expect(deploymentEnv).toContain("CLICKHOUSE_CA_FILE");
    expect([...deploymentEnv, ...read_].filter((k) => !names.has(k))).toEqual([]);
  });

  it("the shared web-archive volume: mounted at WARC_DIR in exactly the roles that read WARC_DIR (compose and chart)", () => {
    const warcRoles = (configVars.warcDir as { roles: string }).roles.split(",").map((r) => r.trim()).sort();
    const doc = parse(read("deploy/compose.yaml"), { merge: true }) as { services: Record<string, Service & { volumes?: unknown[] }>; volumes: Record<string, unknown> };
    const withWarc = Object.entries(doc.services).filter(([, s]) => s.environment?.WARC_DIR !== undefined);
    expect(withWarc.map(([name]) => name).sort()).toEqual(warcRoles);
    for (const [name, s] of withWarc) expect(s.volumes, name).toContain(`trawl-warc:${String(s.environment?.WARC_DIR)}`);
    expect(Object.keys(doc.volumes)).toContain("trawl-warc");
    const helpers = read("helm/trawl/templates/_helpers.tpl");
    const chartRoles = /define "trawl\.warcRoles" -\}\}([^{]*)\{\{/.exec(helpers)?.[1]?.trim().split(/\s+/).sort();
    expect(chartRoles).toEqual(warcRoles);
  });
});
