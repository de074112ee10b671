// Which Authorization headers carry a key, and which address a client's failed attempts count under.
import { describe, expect, it } from "vitest";
import { bearerToken, clientAddress } from "./auth.ts";

describe("bearerToken", () => {
  it("takes a key from the Bearer scheme only (any case), as both official SDKs send it", () => {
    const key = "fc-0123456789abcdef0123456789abcdef01234567";
    for (const h of [`Bearer ${key}`, `bearer ${key}`, `BEARER  ${key} `, `Bearer\t${key}`]) expect(bearerToken(h), h).toBe(key);
    for (const h of ["Bearer", "Bearer ", "bearer  "]) expect(bearerToken(h), h).toBe("");
    for (const h of [`Basic ${key}`, `Token ${key}`, `Bearer-${key}`, `Bearerfc-x`, key, `${key} Bearer`, ""]) expect(bearerToken(h), h).toBeNull();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe("clientAddress", () => {
  it("is the peer, or behind a trusted proxy the address that proxy appended; IPv4-mapped as IPv4, IPv6 per /64", () => {
    expect(clientAddress("127.0.0.3", "1.2.3.4", false)).toBe("127.0.0.3");
    expect(clientAddress("::ffff:127.0.0.3", undefined, false)).toBe("127.0.0.3");
    expect(clientAddress("10.0.0.9", "6.6.6.6, 1.2.3.4", true)).toBe("1.2.3.4");
    expect(clientAddress("10.0.0.9", "", true)).toBe("10.0.0.9");
    expect(clientAddress("2001:db8:1:2:3:4:5:6", undefined, false)).toBe("2001:db8:1:2::/64");
    expect(clientAddress("2001:db8:1:2::ffff", undefined, false)).toBe("2001:db8:1:2::/64");
    expect(clientAddress("10.0.0.9", "[2001:db8::1]", true)).toBe("2001:db8:0:0::/64");
    expect(clientAddress(undefined, undefined, false)).toBe("unknown");
  });
});
