import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:tls";
import { AuthenticationError, MultipleErrors } from "@platformatic/kafka";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";
import { kafkaSecurity, kafkaSecurityFailure } from "./kafka-security.ts";
import { createKafka } from "./kafka-clients.ts";
import { createLogger } from "./logger.ts";
import { registryConnection } from "./registry.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-kafka-security-"));
const pem = join(dir, "ca.pem");
writeFileSync(pem, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
const notPem = join(dir, "ca.der");
writeFileSync(notPem, "\u0030\u0082");
const sasl = { KAFKA_SECURITY_PROTOCOL: "SASL_SSL", KAFKA_SASL_MECHANISM: "SCRAM-SHA-512", KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "pw-123" };
const security = (env: Record<string, string>) => kafkaSecurity(loadConfig(env));

describe("Kafka security settings", () => {
  it("connects in plaintext without a login by default", () => {
    expect(security({})).toEqual({});
  });

  it("builds the client's tls and sasl options, reading the CA file", () => {
    expect(security({ ...sasl, KAFKA_SSL_CA_FILE: pem })).toEqual({
      tls: { ca: [expect.stringContaining("BEGIN CERTIFICATE")] },
      tlsServerName: true,
      sasl: { mechanism: "SCRAM-SHA-512", username: "u", password: "pw-123" },
    });
    expect(security({ KAFKA_SECURITY_PROTOCOL: "ssl" })).toEqual({ tls: {}, tlsServerName: true });
    expect(security({ ...sasl, KAFKA_SECURITY_PROTOCOL: "SASL_PLAINTEXT", KAFKA_SASL_MECHANISM: "PLAIN" })).toEqual({ sasl: { mechanism: "PLAIN", username: "u", password: "pw-123" } });
    expect(security({ ...sasl, KAFKA_SECURITY_PROTOCOL: "SASL_PLAINTEXT", KAFKA_SASL_MECHANISM: "SCRAM-SHA-256" }).sasl?.mechanism).toBe("SCRAM-SHA-256");
    expect(security({ KAFKA_SECURITY_PROTOCOL: "SSL", KAFKA_SSL_CERT_FILE: pem, KAFKA_SSL_KEY_FILE: pem }).tls).toMatchObject({ cert: expect.any(String), key: expect.any(String) });
  });

  it("names the variable of a bad value, a missing login or a setting the protocol would ignore", () => {
    expect(() => loadConfig({ KAFKA_SECURITY_PROTOCOL: "TLS" })).toThrow(/KAFKA_SECURITY_PROTOCOL="TLS" is invalid: expected one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL/);
    expect(() => loadConfig({ KAFKA_SASL_MECHANISM: "GSSAPI" })).toThrow(/KAFKA_SASL_MECHANISM="GSSAPI" is invalid/);
    expect(() => security({ KAFKA_SECURITY_PROTOCOL: "SASL_SSL", KAFKA_SASL_USERNAME: "u" })).toThrow("KAFKA_SECURITY_PROTOCOL=SASL_SSL needs KAFKA_SASL_MECHANISM, KAFKA_SASL_PASSWORD (not set)");
    expect(() => security({ KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "pw-123" })).toThrow("KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD set but KAFKA_SECURITY_PROTOCOL=PLAINTEXT does not use SASL");
    expect(() => security({ ...sasl, KAFKA_SECURITY_PROTOCOL: "SASL_PLAINTEXT", KAFKA_SSL_CA_FILE: pem })).toThrow("KAFKA_SSL_CA_FILE set but KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT does not use TLS");
    expect(() => security({ KAFKA_SECURITY_PROTOCOL: "SSL", KAFKA_SSL_CERT_FILE: pem })).toThrow(/KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together/);
  });

  it("names the broker's host in the TLS handshake (SNI), as a proxy that routes by it needs", async () => {
    const names: string[] = [];
    // a TLS server that only reads the client's hello: its SNI, then the handshake is refused
    const server = createServer({ SNICallback: (name, cb) => (names.push(name), cb(new Error("not a broker"))) });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const admin = createKafka(loadConfig({ KAFKA_SECURITY_PROTOCOL: "SSL", KAFKA_BROKERS: `localhost:${port}` }), "sni-test", createLogger("error"), 0).admin();
      await expect(admin.metadata({ topics: [] })).rejects.toThrow();
      await admin.close().catch(() => undefined);
      expect(names).toContain("localhost");
    } finally {
      server.close();
    }
  });

  it("stops on a CA file that is missing or not PEM, naming the variable and never the password", () => {
    const missing = join(dir, "nope.pem");
    const err = (() => {
      try {
        security({ ...sasl, KAFKA_SSL_CA_FILE: missing });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err?.message).toContain(`KAFKA_SSL_CA_FILE="${missing}" cannot be read`);
    expect(err?.message).not.toContain("pw-123");
    expect(() => security({ ...sasl, KAFKA_SSL_CA_FILE: notPem })).toThrow(`KAFKA_SSL_CA_FILE="${notPem}" is not a PEM file`);
  });

  it("explains a refused login by the user and mechanism, and an untrusted certificate by the CA file", () => {
    const config = loadConfig({ ...sasl, KAFKA_SSL_CA_FILE: pem });
    // as the client reports it: an AuthenticationError inside the MultipleErrors of a request's retries
    const refused = new AuthenticationError("SASL authentication failed.");
    const wrapped = new MultipleErrors("Cannot connect to any broker.", [new Error("first try", { cause: refused })]);
    const msg = kafkaSecurityFailure(wrapped, config)?.message ?? "";
    expect(msg).toContain('KAFKA_SASL_USERNAME="u" with KAFKA_SASL_MECHANISM=SCRAM-SHA-512: check KAFKA_SASL_PASSWORD (not shown)');
    expect(msg).not.toContain("pw-123");
    const untrusted = Object.assign(new Error("Connection error: unable to verify the first certificate"), { code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
    expect(kafkaSecurityFailure(untrusted, config)?.message).toContain(`check KAFKA_SSL_CA_FILE="${pem}"`);
    expect(kafkaSecurityFailure(Object.assign(new Error("Connection refused"), { code: "ECONNREFUSED" }), config)).toBeUndefined();
  });
});

describe("Schema Registry connection settings", () => {
  const base = { schemaRegistryUrl: "https://r.test:8081", schemaRegistryUsername: "", schemaRegistryPassword: "", schemaRegistryCaFile: "" };

  it("carries Basic credentials and the CA's PEM", () => {
    expect(registryConnection({ ...base, schemaRegistryUsername: "u", schemaRegistryPassword: "p", schemaRegistryCaFile: pem })).toEqual({
      url: "https://r.test:8081",
      auth: { username: "u", password: "p" },
      ca: expect.stringContaining("BEGIN CERTIFICATE"),
    });
  });

  it("names SCHEMA_REGISTRY_* on a missing CA file, a CA without https, a password without a user", () => {
    expect(() => registryConnection({ ...base, schemaRegistryCaFile: join(dir, "nope.pem") })).toThrow(/SCHEMA_REGISTRY_CA_FILE=".*nope.pem" cannot be read/);
    expect(() => registryConnection({ ...base, schemaRegistryUrl: "http://r.test:8081", schemaRegistryCaFile: pem })).toThrow(/SCHEMA_REGISTRY_CA_FILE is set but SCHEMA_REGISTRY_URL="http:\/\/r.test:8081" is not an https URL/);
    expect(() => registryConnection({ ...base, schemaRegistryPassword: "p" })).toThrow("SCHEMA_REGISTRY_PASSWORD is set without SCHEMA_REGISTRY_USERNAME");
  });
});
