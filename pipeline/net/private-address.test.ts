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
