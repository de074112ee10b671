// The topology tells the truth: every declared topic is produced and consumed, every consume loop is declared with
// its group, and the roles whose code emits to a topic are exactly the topic's declared producers.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processors, topics, type ProcessorSpec, type Role } from "./topology.ts";

const root = join(import.meta.dirname, "..");

/** Where each role's code lives (the API's submit and cancel go through the use cases). */
const codeOf: Record<Role, string[]> = {
  api: ["api", "pipeline/usecases"],
  frontier: ["pipeline/frontier", "pipeline/admission"],
  "fetch-render": ["pipeline/fetch-render"],
  render: ["pipeline/render"],
  convert: ["pipeline/convert"],
  "extract-json": ["pipeline/extract-json"],
  sink: ["pipeline/sink"],
  "webhook-emit": ["pipeline/webhook-emit"],
};

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => readFileSync(join(root, dir, f), "utf8"));
}

/** Topics a role's code names in an emission (`topic: "x"` object literals). */
function emittedBy(role: Role): Set<string> {
  const out = new Set<string>();
  for (const text of codeOf[role].flatMap(sources)) for (const m of text.matchAll(/\btopic: "([a-z.]+)"/g)) out.add(m[1] as string);
  return out;
}

const specs = Object.entries(processors as Record<string, ProcessorSpec>);

describe("topology", () => {
  it("every topic has a producer and a consumer (a public topic may be read only downstream)", () => {
    for (const t of topics) {
      expect(t.producers.length, t.name).toBeGreaterThan(0);
      if (!t.public) expect(t.consumers.length, t.name).toBeGreaterThan(0);
    }
  });

  it("every consume loop is declared on a declared topic by one of its consumer roles, and every consumer role has one", () => {
    for (const [name, p] of specs) {
      const topic = topics.find((t) => t.name === p.topic);
      expect(topic, name).toBeDefined();
      expect(topic?.consumers, name).toContain(p.role);
    }
    for (const t of topics) for (const role of t.consumers) expect(specs.some(([, p]) => p.topic === t.name && p.role === role), `${role} on ${t.name}`).toBe(true);
  });

  it("consumer group names are unique", () => {
    const groups = specs.map(([, p]) => p.group);
    expect(new Set(groups).size).toBe(groups.length);
  });

  it("the roles that emit to a topic are its declared producers", () => {
    for (const t of topics) {
      const actual = (Object.keys(codeOf) as Role[]).filter((role) => emittedBy(role).has(t.name)).sort();
      expect(actual, t.name).toEqual([...t.producers].sort());
    }
  });

  it("every processor takes its identity from the topology, and each declared processor exists in the code", () => {
    const code = [...Object.values(codeOf).flat()].flatMap(sources).join("\n");
    for (const [name] of specs) expect(code.match(new RegExp(`super\\("${name}"\\)`, "g"))?.length, name).toBe(1);
    expect(code).not.toMatch(/readonly topic = "/);
  });
});
