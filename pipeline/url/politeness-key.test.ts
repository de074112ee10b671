import { describe, expect, it } from "vitest";
import { politenessKey } from "./politeness-key.ts";

describe("politenessKey", () => {
  it("host scope (the default): host and port, whatever the path or scheme", () => {
    expect(politenessKey("https://docs.example.com/a?b")).toBe("docs.example.com");
    expect(politenessKey("http://127.0.0.1:8080/x", "host")).toBe("127.0.0.1:8080");
    expect(politenessKey("http://WWW.Example.COM/")).toBe("www.example.com");
  });

  it("domain scope: the registrable domain; an address or a name without a public suffix stays its host", () => {
    expect(politenessKey("https://a.docs.example.co.uk/x", "domain")).toBe("example.co.uk");
    expect(politenessKey("https://b.example.co.uk:8443/", "domain")).toBe("example.co.uk");
    expect(politenessKey("http://127.0.0.1:8080/", "domain")).toBe("127.0.0.1:8080");
    expect(politenessKey("http://localhost:3000/", "domain")).toBe("localhost:3000");
  });
});
