// The Kafka a user gets from deploy/compose.yaml and the chart's dev infrastructure is the version CI runs: the one
// scripts/kafka.sh resolves from Maven Central (scripts/kafka/pom.xml), which every Kafka test and the compose check's
// stand-in (deploy/compose.standins.yaml) use. Moving CI's Kafka moves these, or this test fails.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const ciKafka = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(read("scripts/kafka/pom.xml"))?.[1];

describe("versions the user gets are the versions CI tests", () => {
  it("names a Kafka version in scripts/kafka/pom.xml", () => {
    expect(ciKafka).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("deploy/compose.yaml runs that Kafka", () => {
    const compose = parse(read("deploy/compose.yaml"), { merge: true });
    expect(compose.services.kafka.image).toBe(`apache/kafka:${ciKafka}`);
  });

  it("the chart's dev Kafka is that Kafka", () => {
    expect(parse(read("helm/trawl/values.yaml")).devInfra.kafkaImage).toBe(`apache/kafka:${ciKafka}`);
  });

  it("the compose check's stand-in is that Kafka", () => {
    // (Compose's !reset and !override tags are left unresolved: only the image is read)
    const standins = parse(read("deploy/compose.standins.yaml"), { logLevel: "error" });
    expect(standins.services.kafka.image).toBe(`localhost/trawl-standin-kafka:${ciKafka}`);
  });
});
