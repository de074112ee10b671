import { describe, expect, it, vi } from "vitest";
import { roles } from "../pipeline/topology.ts";
import { main, parseRoles } from "./main.ts";
import { ROLES } from "./start.ts";

describe("the roles argument", () => {
  it("is all, one role, or several joined by commas, in start order", () => {
    expect(parseRoles("all")).toEqual([...ROLES]);
    expect(parseRoles("api")).toEqual(["api"]);
    expect(parseRoles("sink,frontier,convert,frontier")).toEqual(["frontier", "convert", "sink"]);
  });
  it("names every unknown role", () => {
    expect(parseRoles("frontier,fetch,sinks")).toBe('unknown role "fetch", "sinks"');
    expect(parseRoles("api,")).toBe('unknown role ""');
    expect(parseRoles("all,api")).toBe('unknown role "all"');
  });
});

describe("trawl --help", () => {
  it("lists every role that `trawl all` starts, each with what it does (render included)", async () => {
    const printed: unknown[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((text: unknown) => void printed.push(text));
    try {
      await main(["--help"]);
    } finally {
      log.mockRestore();
    }
    const help = printed.join("\n");
    expect(ROLES).toContain("render");
    for (const role of ROLES) expect(help).toMatch(new RegExp(`^  ${role} +\\S`, "m"));
    expect(help).toContain(`  render         ${roles.render}`);
  });
});
