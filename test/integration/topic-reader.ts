// Reads a public topic of a running instance as a downstream consumer would: kcat from the beginning (cluster mode),
// or a broadcast consumer of the embedded bus registered before the messages are produced (embedded mode).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Consumed, Processor } from "../../pipeline/runtime/bus.ts";
import type { EmbeddedBus } from "../../pipeline/runtime/embedded-bus.ts";
import type { LogicalTopic } from "../../pipeline/topology.ts";
import type { SchemaName } from "../../schemas/index.ts";
import type { Instance } from "./harness.ts";

const run = promisify(execFile);

export interface TopicReader {
  /**
   * Every message read so far, as [key, value, when it was produced]: the message's timestamp (cluster mode), or when
   * the reader saw it (embedded mode: once it is on disk, a moment after it was produced).
   */
  messages(): Promise<[string, any, number][]>;
  stop(): Promise<void>;
}

const SCHEMAS: Record<"crawl.pages" | "crawl.events" | "crawl.changes", SchemaName> = { "crawl.pages": "crawl-page", "crawl.events": "crawl-event", "crawl.changes": "crawl-change" };

export function readTopic(trawl: Instance, topic: LogicalTopic & keyof typeof SCHEMAS): TopicReader {
  const { config } = trawl;
  if (config.mode === "cluster") {
    return {
      async messages() {
        const { stdout } = await run("kcat", ["-b", config.kafkaBrokers, "-C", "-t", `${config.topicPrefix}${topic}`, "-o", "beginning", "-e", "-q", "-f", "%k\\t%T\\t%s\\n"], { maxBuffer: 64 * 1024 * 1024 });
        return stdout.trim().split("\n").filter(Boolean).map((line) => {
          const [key, at, value] = line.split("\t");
          return [key as string, JSON.parse(value as string), Number(at)];
        });
      },
      stop: async () => undefined,
    };
  }
  const seen: [string, any, number][] = [];
  const reader: Processor<unknown> = {
    name: `test-reader-${topic}`, topic, schema: SCHEMAS[topic], group: `test-reader-${topic}`,
    mode: "ordered", concurrency: 1, broadcast: true, createBatch: () => undefined,
    handle: async (msg: Consumed<unknown>) => {
      seen.push([msg.key, msg.value, Date.now()]);
      return [];
    },
  };
  const handle = (trawl.running.bus as EmbeddedBus).consume(reader, trawl.running.log);
  return { messages: async () => [...seen], stop: () => handle.stop() };
}
