import { describe, expect, it } from "vitest";
import { parseAdHosts } from "./ad-hosts.ts";

describe("ad hosts of filter lists", () => {
  const hosts = parseAdHosts([
    ["! comment", "||ads.example^", "||track.example^$script,third-party", "||popups.example^$popup", "||site-only.example^$domain=a.test",
      "||path.example/ads.js", "example.org##.banner", "||cdn.ads.example^", "@@||ok.ads.example^", "||neg.example^$~third-party"].join("\n"),
  ]);
  it("blocks whole-host rules and their subdomains", () => {
    expect(hosts.blocks("ads.example")).toBe(true);
    expect(hosts.blocks("x.y.ads.example")).toBe(true);
    expect(hosts.blocks("ADS.EXAMPLE.")).toBe(true);
    expect(hosts.blocks("track.example")).toBe(true);
  });
  it("leaves out site-restricted, popup, path, cosmetic and negated rules; an exception wins", () => {
    for (const host of ["popups.example", "site-only.example", "path.example", "example.org", "neg.example", "ok.ads.example", "sub.ok.ads.example", "notads.example", "example"]) {
      expect(hosts.blocks(host), host).toBe(false);
    }
    expect(hosts.size).toBe(3);
  });
});

describe("exceptions against blocks", () => {
  it("an exception for a parent domain beats a block of a subdomain; an $important block beats every exception", () => {
    const hosts = parseAdHosts(["@@||example.com^\n||ads.example.com^\n||track.example.com^$important\n||other.test^"]);
    expect(hosts.blocks("ads.example.com")).toBe(false);
    expect(hosts.blocks("x.ads.example.com")).toBe(false);
    expect(hosts.blocks("track.example.com")).toBe(true);
    expect(hosts.blocks("a.other.test")).toBe(true);
    expect(hosts.blocks("example.com")).toBe(false);
    expect(hosts.size).toBe(3);
  });
});
