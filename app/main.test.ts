import { describe, expect, it } from "vitest";
import { parseRoles } from "./main.ts";
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
