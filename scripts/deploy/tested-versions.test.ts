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
