// Compression of produced batches on a real broker: the internal topics go out as zstd (KAFKA_COMPRESSION), the public
// ones as KAFKA_PUBLIC_COMPRESSION says; the broker accepts and stores them compressed (the partition's log on disk is
// the evidence), Trawl's client (@platformatic/kafka) reads them back, and kcat (librdkafka, a downstream
// consumer's client) reads them too.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTopic } from "./read-topic.ts";
import { createKafka, ensureTopics, KafkaBus } from "../../pipeline/runtime/kafka-bus.ts";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { physicalTopic } from "../../pipeline/topology.ts";

const run = promisify(execFile);
const infraDir = process.env.TRAWL_INFRA_DIR ?? join(import.meta.dirname, "..", "..", ".infra");

/**
 * Bytes of a partition's log segments on the local broker's disk. The suite reuses a broker already listening on the
 * port, so the one answering may keep its data under another checkout's .infra: say so instead of a bare ENOENT.
 */
function logBytes(topic: string, partition = 0): number {
  const data = join(infraDir, "kafka", "data");
  if (!existsSync(data)) throw new Error(`no ${data}: the broker at KAFKA_BROKERS was not started from ${infraDir} (stop it, or set TRAWL_INFRA_DIR to its directory)`);
  const dir = join(data, `${topic}-${partition}`);
  return readdirSync(dir).filter((f) => f.endsWith(".log")).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

/** A page-like value: ~20 KB of HTML, repetitive the way real pages are, different per message. */
const page = (i: number) => ({ url: `https://example.test/p${i}`, html: Array.from({ length: 200 }, (_, j) => `<li><a href="/docs/p${i}-${j}.html">Section ${j} of page ${i}</a></li>`).join("\n") });

describe("Kafka compression (cluster mode)", () => {
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  let config: Config;
  let bus: KafkaBus;
  const log = createLogger("error");
  beforeAll(async () => {
    config = loadConfig(process.env, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 1 });
    const kafka = createKafka(config, "compression-test", log);
    await ensureTopics(kafka, config, log);
    bus = new KafkaBus(kafka, config.topicPrefix, undefined, { compression: "zstd", publicCompression: "none" });
    for (let i = 0; i < 100; i += 10) {
      const batch = Array.from({ length: 10 }, (_, k) => page(i + k));
      await bus.produce(batch.flatMap((value) => [
        { topic: "pages.fetched" as const, key: "crawl-1", value },
        { topic: "crawl.pages" as const, key: "crawl-1", value },
      ]));
    }
  });
  afterAll(async () => {
    await bus?.close();
  });

  it("stores the internal topic zstd-compressed and the public one as the public setting says", () => {
    const internal = logBytes(physicalTopic(config.topicPrefix, "pages.fetched"));
    const pub = logBytes(physicalTopic(config.topicPrefix, "crawl.pages"));
    const raw = JSON.stringify(page(0)).length * 100;
    expect(pub).toBeGreaterThan(raw); // uncompressed: the values and their record overhead
    expect(internal).toBeLessThan(raw / 4);
  });

  it("reads zstd batches back with Trawl's client and with kcat, in order", async () => {
    const kafka = createKafka(config, "compression-test-reader", log);
    const read = await readTopic(kafka, physicalTopic(config.topicPrefix, "pages.fetched"), `${tag}.reader`, (v) => v.length >= 100, 20_000);
    const urls = read.map((v) => (JSON.parse(String(v)) as { url: string }).url);
    expect(urls).toEqual(Array.from({ length: 100 }, (_, i) => `https://example.test/p${i}`));

    const { stdout } = await run("kcat", ["-b", config.kafkaBrokers, "-C", "-t", physicalTopic(config.topicPrefix, "pages.fetched"), "-o", "beginning", "-e", "-q", "-f", "%s\\n"], { maxBuffer: 64 * 1024 * 1024 });
    const values = stdout.trim().split("\n").map((line) => JSON.parse(line) as { url: string; html: string });
    expect(values.map((v) => v.url)).toEqual(urls);
    expect(values[7]).toEqual(page(7));
  });
});
