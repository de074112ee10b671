// The Kafka a user gets from deploy/compose.yaml and the chart's dev infrastructure is a version CI runs: the default
// scripts/kafka.sh resolves from Maven Central (scripts/kafka/pom.xml), which the whole integration suite runs on, or
// the version .ci/run runs the cluster fault test on again (TRAWL_KAFKA_VERSION=…); the compose check's stand-in
// (deploy/compose.standins.yaml) is the same one. Moving CI's Kafka away from it fails this test.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const ciKafka = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(read("scripts/kafka/pom.xml"))?.[1];
/** Every Kafka version CI runs tests on: the default, and those .ci/run selects for a test run of its own. */
const tested = new Set([ciKafka, ...[...read(".ci/run").matchAll(/TRAWL_KAFKA_VERSION=(\d+\.\d+\.\d+)/g)].map((m) => m[1])]);
const composeKafka = (parse(read("deploy/compose.yaml"), { merge: true }).services.kafka.image as string).replace(/^apache\/kafka:/, "");

describe("versions the user gets are the versions CI tests", () => {
  it("names a Kafka version in scripts/kafka/pom.xml", () => {
    expect(ciKafka).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("deploy/compose.yaml runs a Kafka CI tests", () => {
    expect([...tested]).toContain(composeKafka);
  });

  it("the chart's dev Kafka is that Kafka", () => {
    expect(parse(read("helm/trawl/values.yaml")).devInfra.kafkaImage).toBe(`apache/kafka:${composeKafka}`);
  });

  it("the compose check's stand-in is that Kafka", () => {
    // (Compose's !reset and !override tags are left unresolved: only the image is read)
    const standins = parse(read("deploy/compose.standins.yaml"), { logLevel: "error" });
    expect(standins.services.kafka.image).toBe(`localhost/trawl-standin-kafka:${composeKafka}`);
  });
});

// The ClickHouse they name cannot run here (CI's server is Debian's 18.16): .ci/run proves Trawl's SQL on a current
// engine in-process instead (scripts/chdb.sh: chdb-core, whose version is the ClickHouse release it embeds).
const composeClickHouse = (parse(read("deploy/compose.yaml"), { merge: true }).services.clickhouse.image as string).replace(/^clickhouse\/clickhouse-server:/, "");
const chdbEngine = /^CHDB_CORE_VERSION=(\d+)\.(\d+)/m.exec(read("scripts/chdb.sh"));

describe("the ClickHouse the user gets is one whose SQL CI checks", () => {
  it("the chart's dev ClickHouse is the compose file's", () => {
    expect(parse(read("helm/trawl/values.yaml")).devInfra.clickhouseImage).toBe(`clickhouse/clickhouse-server:${composeClickHouse}`);
  });

  it("it is a current release (25.x or later), and the engine of the SQL check is at least as new", () => {
    const [major = 0, minor = 0] = composeClickHouse.split(".").map(Number);
    expect(major).toBeGreaterThanOrEqual(25);
    expect(Number(chdbEngine?.[1]) * 100 + Number(chdbEngine?.[2])).toBeGreaterThanOrEqual(major * 100 + minor);
  });

  it(".ci/run captures the tests' SQL and checks it on that engine", () => {
    const ci = read(".ci/run");
    expect(ci).toMatch(/TRAWL_SQL_CAPTURE="\$capture" npm test/);
    expect(ci).toMatch(/scripts\/chdb\.sh check "\$capture"/);
  });
});
