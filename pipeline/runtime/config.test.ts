import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, configTable, configVars, loadConfig } from "./config.ts";

describe("config", () => {
  it("has defaults for everything", () => {
    const c = loadConfig({});
    expect(c.port).toBe(3002);
    expect(c.useDbAuthentication).toBe(false);
    expect(c.statusChunkMaxBytes).toBe(10 * 1024 * 1024);
    expect(c.topicPartitions).toBe(4);
  });
  it("parses values", () => {
    const c = loadConfig({ PORT: "8080", USE_DB_AUTHENTICATION: "FALSE", TRUST_PROXY: "true", CLICKHOUSE_URL: "http://ch:8123/" });
    expect(c).toMatchObject({ port: 8080, useDbAuthentication: false, trustProxy: true, clickhouseUrl: "http://ch:8123" });
  });
  it("names the variable of a bad value", () => {
    const bad: [string, string][] = [["PORT", "abc"], ["PORT", "70000"], ["TRUST_PROXY", "maybe"], ["CLICKHOUSE_URL", "not a url"], ["LOG_LEVEL", "loud"], ["KAFKA_PARTITIONS", "0"], ["MAX_CPU", "1.5"], ["MAX_RAM", "lots"]];
    for (const [name, value] of bad) {
      expect(() => loadConfig({ [name]: value }), name).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value }), name).toThrow(name);
    }
  });
  it("documents every variable", () => {
    const table = configTable();
    for (const v of Object.values(configVars)) expect(table).toContain(`\`${v.env}\``);
  });
  it("docs/configuration.md carries the current table (regenerate with `npx trawl config`)", () => {
    expect(readFileSync(join(import.meta.dirname, "..", "..", "docs", "configuration.md"), "utf8")).toContain(configTable());
  });
  it("an idle fetch wait of more than a third of the session timeout stops the start, naming both", () => {
    expect(() => loadConfig({ KAFKA_IDLE_FETCH_MAX_WAIT_MS: "5000", KAFKA_SESSION_TIMEOUT_MS: "12000" })).toThrow(/KAFKA_IDLE_FETCH_MAX_WAIT_MS=5000 .*KAFKA_SESSION_TIMEOUT_MS=12000/);
    expect(loadConfig({ KAFKA_IDLE_FETCH_MAX_WAIT_MS: "4000", KAFKA_SESSION_TIMEOUT_MS: "12000" }).kafkaIdleFetchMaxWaitMs).toBe(4000);
  });

  it("an optional URL may be empty; a set one must be http(s)", () => {
    expect(loadConfig({ SCHEMA_REGISTRY_URL: "" }).schemaRegistryUrl).toBe("");
    expect(loadConfig({ SCHEMA_REGISTRY_URL: "http://r.test:8081/apis/ccompat/v7/" }).schemaRegistryUrl).toBe("http://r.test:8081/apis/ccompat/v7");
    expect(() => loadConfig({ SCHEMA_REGISTRY_URL: "ftp://r.test" })).toThrow("SCHEMA_REGISTRY_URL");
    expect(() => loadConfig({ CLICKHOUSE_URL: "" })).toThrow("CLICKHOUSE_URL");
  });
  it("WARC_S3_URL is s3://<bucket>/<prefix>, else the start stops naming it; the AWS key pair goes together", () => {
    expect(loadConfig({}).warcS3Url).toBe("");
    expect(loadConfig({ WARC_S3_URL: "s3://crawl-archive/trawl/warc/" }).warcS3Url).toBe("s3://crawl-archive/trawl/warc");
    expect(loadConfig({ WARC_S3_URL: "s3://crawl-archive" }).warcS3Url).toBe("s3://crawl-archive");
    expect(loadConfig({ WARC_S3_URL: " s3://a.b-c/x " }).warcS3Url).toBe("s3://a.b-c/x");
    for (const bad of ["https://bucket.s3.amazonaws.com/x", "s3://", "s3:///prefix", "s3://Bucket/x", "s3://ab", "s3://b..x/y", "s3://bucket/a//b", "s3://bucket/a/../b", "bucket/prefix"]) {
      expect(() => loadConfig({ WARC_S3_URL: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ WARC_S3_URL: bad }), bad).toThrow(/^config: WARC_S3_URL=/);
    }
    expect(() => loadConfig({ WARC_S3_ENDPOINT: "s3.test:9000" })).toThrow("WARC_S3_ENDPOINT");
    expect(() => loadConfig({ WARC_S3_FORCE_PATH_STYLE: "maybe" })).toThrow("WARC_S3_FORCE_PATH_STYLE");
    expect(() => loadConfig({ AWS_ACCESS_KEY_ID: "AKIA1" })).toThrow(/AWS_SECRET_ACCESS_KEY is not set/);
    expect(() => loadConfig({ AWS_SECRET_ACCESS_KEY: "s" })).toThrow(/AWS_ACCESS_KEY_ID is not set/);
    expect(loadConfig({ AWS_ACCESS_KEY_ID: "AKIA1", AWS_SECRET_ACCESS_KEY: "s" }).awsSecretAccessKey).toBe("s");
  });
  it("reads Firecrawl's names as aliases; conflicting values stop the start naming both", () => {
    expect(loadConfig({ LOGGING_LEVEL: "DEBUG" }).logLevel).toBe("debug");
    expect(loadConfig({ EXPRESS_TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: "true", EXPRESS_TRUST_PROXY: "1" }).trustProxy).toBe(true);
    expect(() => loadConfig({ LOG_LEVEL: "info", LOGGING_LEVEL: "debug" })).toThrow(/LOG_LEVEL="info" and LOGGING_LEVEL="debug" conflict/);
    expect(() => loadConfig({ TRUST_PROXY: "false", EXPRESS_TRUST_PROXY: "true" })).toThrow(ConfigError);
    expect(() => loadConfig({ LOGGING_LEVEL: "loud" })).toThrow("LOGGING_LEVEL");
    expect(configTable()).toContain("Also read as `LOGGING_LEVEL`");
  });
  it("SELF_HOSTED_WEBHOOK_URL: empty or an http(s) URL", () => {
    expect(loadConfig({}).defaultWebhookUrl).toBe("");
    expect(loadConfig({ SELF_HOSTED_WEBHOOK_URL: "http://hooks.test/in" }).defaultWebhookUrl).toBe("http://hooks.test/in");
    expect(() => loadConfig({ SELF_HOSTED_WEBHOOK_URL: "nope" })).toThrow("SELF_HOSTED_WEBHOOK_URL");
  });
  it("parses RESOLVE, WEBHOOK_RETRY_DELAYS_MS and PROXY_SERVER once, naming the variable of a bad value", () => {
    expect(() => loadConfig({ RESOLVE: "nocolon" })).toThrow(/RESOLVE/);
    expect(loadConfig({ RESOLVE: "A.test:127.0.0.1, b.test:::1" }).resolve).toEqual({ "a.test": "127.0.0.1", "b.test": "::1" });
    expect(loadConfig({}).resolve).toEqual({});
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS_MS: "10,x" })).toThrow(/WEBHOOK_RETRY_DELAYS_MS/);
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS_MS: "" })).toThrow(/WEBHOOK_RETRY_DELAYS_MS/);
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_MS: "100, 200" }).webhookRetryDelaysMs).toEqual([100, 200]);
    expect(loadConfig({}).proxyServer).toBe("");
    expect(loadConfig({ PROXY_SERVER: "10.0.0.5:3128" }).proxyServer).toBe("http://10.0.0.5:3128");
    expect(loadConfig({ PROXY_SERVER: "https://proxy.test:8443/" }).proxyServer).toBe("https://proxy.test:8443");
    for (const bad of ["socks5://p.test:1080", "http://p.test", "::::"]) expect(() => loadConfig({ PROXY_SERVER: bad }), bad).toThrow(/PROXY_SERVER/);
  });
});
