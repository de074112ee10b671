import { describe, expect, it } from "vitest";
import { isPrivateAddress } from "./private-address.ts";
import { decodeBody } from "../fetch-render/charset.ts";

describe("isPrivateAddress", () => {
  it("knows loopback, private, link-local and unique-local ranges", () => {
    for (const a of ["127.0.0.1", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.0.1", "169.254.169.254", "0.0.0.0", "100.64.0.1", "::1", "fc00::1", "fd12::1", "fe80::1", "::ffff:127.0.0.1", "[::1]"]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ["8.8.8.8", "172.32.0.1", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"]) expect(isPrivateAddress(a), a).toBe(false);
  });

  it("judges IPv6 forms that carry an IPv4 address by that address, in every spelling", () => {
    const privateOnes = [
      "::ffff:7f00:1", "[::ffff:7f00:1]", "::FFFF:127.0.0.1", "0:0:0:0:0:ffff:7f00:0001", "::ffff:a9fe:a9fe", "::ffff:10.1.2.3", // mapped
      "::ffff:0:7f00:1", // IPv4-translated
      "::127.0.0.1", "::7f00:1", "::a00:1", "::", // IPv4-compatible (and unspecified)
      "64:ff9b::127.0.0.1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1", // NAT64
      "2002:7f00:1::", "2002:c0a8:101::1", "2002:a00:1::", // 6to4
    ];
    for (const a of privateOnes) expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ["::ffff:808:808", "64:ff9b::808:808", "64:ff9b::8.8.8.8", "2002:808:808::1", "::ffff:1.1.1.1"]) expect(isPrivateAddress(a), a).toBe(false);
  });

  it("refuses the other special ranges: multicast, broadcast, CGNAT, reserved, documentation, teredo", () => {
    for (const a of ["224.0.0.1", "239.255.255.250", "255.255.255.255", "100.127.255.255", "240.0.0.1", "192.0.2.1", "198.18.0.1", "192.0.0.1",
      "ff02::1", "fec0::1", "2001:db8::1", "2001::1", "100::1", "fe80::1%eth0"]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
  });

  it("is false for host names (they are resolved, then checked)", () => {
    for (const a of ["example.com", "localhost", "127.1", ""]) expect(isPrivateAddress(a), a).toBe(false);
  });
});

describe("decodeBody", () => {
  it("uses the header charset, then the meta tag, then UTF-8", () => {
    const sjis = Buffer.from([0x93, 0xfa, 0x96, 0x7b]); // 日本 in Shift_JIS
    expect(decodeBody(sjis, "text/html; charset=Shift_JIS")).toBe("日本");
    const meta = Buffer.concat([Buffer.from('<meta charset="euc-kr">'), Buffer.from([0xc7, 0xd1])]); // 한
    expect(decodeBody(meta, "text/html")).toBe('<meta charset="euc-kr">한');
    expect(decodeBody(Buffer.from("héllo"), "text/html")).toBe("héllo");
    expect(decodeBody(Buffer.from("\uFEFFbom", "utf8"), "text/html")).toBe("bom");
    expect(decodeBody(Buffer.from("x"), "text/html; charset=no-such-charset")).toBe("x");
  });
});
