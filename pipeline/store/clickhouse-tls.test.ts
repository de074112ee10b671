import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../runtime/config.ts";
import { classify } from "../runtime/errors.ts";
import { clickHouseAgent, refuseCredentialsInUrl, safeOrigin, tlsOrAuthFailure } from "./clickhouse-tls.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-ch-tls-unit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("clickHouseAgent", () => {
  it("no agent of its own for http://; the system's CAs for https:// without a CA file", () => {
    expect(clickHouseAgent("http://127.0.0.1:8123", "")).toBeUndefined();
    const agent = clickHouseAgent("https://ch.example:8443", "");
    expect((agent?.options.ca as string[]).length).toBeGreaterThan(10);
  });

  it("a missing or certificate-less CA file is a ConfigError naming CLICKHOUSE_CA_FILE, for http:// too", () => {
    const missing = join(dir, "missing.pem");
    for (const url of ["https://ch.example:8443", "http://ch.example:8123"]) {
      expect(() => clickHouseAgent(url, missing)).toThrow(ConfigError);
      expect(() => clickHouseAgent(url, missing)).toThrow(`CLICKHOUSE_CA_FILE="${missing}" cannot be read (ENOENT)`);
    }
    const text = join(dir, "text.pem");
    writeFileSync(text, "not a certificate\n");
    expect(() => clickHouseAgent("https://ch.example:8443", text)).toThrow(/CLICKHOUSE_CA_FILE=".*text.pem" holds no PEM certificate/);
    const broken = join(dir, "broken.pem");
    writeFileSync(broken, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    expect(() => clickHouseAgent("https://ch.example:8443", broken)).toThrow(/holds no PEM certificate/);
  });
});

describe("tlsOrAuthFailure", () => {
  const url = "https://trawl:hunter2-secret@ch.example:8443";
  it("an untrusted certificate names CLICKHOUSE_URL (without its user part) and CLICKHOUSE_CA_FILE", () => {
    const err = Object.assign(new Error("self-signed certificate in certificate chain"), { code: "SELF_SIGNED_CERT_IN_CHAIN" });
    const e = tlsOrAuthFailure(err, url, "/etc/trawl/ca.pem", "query");
    expect(e?.code).toBe("STORE_TLS_UNTRUSTED");
    expect(classify(e)).toBe("retry");
    expect(e?.message).toContain("CLICKHOUSE_URL=https://ch.example:8443 is not trusted by the CA of CLICKHOUSE_CA_FILE=\"/etc/trawl/ca.pem\"");
    expect(e?.message).not.toContain("hunter2");
    const name = Object.assign(new Error("Hostname/IP does not match certificate's altnames"), { code: "ERR_TLS_CERT_ALTNAME_INVALID" });
    expect(tlsOrAuthFailure(name, url, "", "query")?.message).toContain("not trusted by the system's CAs (CLICKHOUSE_CA_FILE is empty)");
    expect(tlsOrAuthFailure(name, url, "", "query")?.message).toContain("the certificate must name the host of CLICKHOUSE_URL");
    expect(e?.message).toContain("set CLICKHOUSE_CA_FILE to the PEM file of the CA that signed it");
  });

  it("refused credentials name the variables, not their values; other failures are not its business", () => {
    const err = new Error("401: Code: 193, e.displayText() = DB::Exception: Wrong password for user trawl, e.what() = DB::Exception");
    const e = tlsOrAuthFailure(err, url, "", "statement");
    expect(e?.code).toBe("STORE_AUTH_REFUSED");
    // a running stage waits for the fix as in an outage (before: BUG, dead-lettered, the page lost)
    expect(classify(e)).toBe("retry");
    expect(e?.message).toBe("clickhouse statement failed: https://ch.example:8443 refused CLICKHOUSE_USER/CLICKHOUSE_PASSWORD (Wrong password for user trawl)");
    expect(tlsOrAuthFailure(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8443"), { code: "ECONNREFUSED" }), url, "", "query")).toBeUndefined();
    expect(tlsOrAuthFailure(new Error("500: Code: 62, e.displayText() = DB::Exception: Syntax error"), url, "", "query")).toBeUndefined();
  });

  it("safeOrigin keeps scheme, host and port only", () => {
    expect(safeOrigin(url)).toBe("https://ch.example:8443");
  });

  it("a user or password in CLICKHOUSE_URL stops the start without repeating them", () => {
    expect(() => refuseCredentialsInUrl(url)).toThrow(ConfigError);
    expect(() => refuseCredentialsInUrl(url)).toThrow(/CLICKHOUSE_URL carries a user or password .*set CLICKHOUSE_USER and CLICKHOUSE_PASSWORD/);
    expect(() => refuseCredentialsInUrl(url)).not.toThrow(/hunter2|trawl:/);
    expect(() => refuseCredentialsInUrl("https://ch.example:8443")).not.toThrow();
  });
});
