// Trawl's producer is idempotent: a produce request that the broker wrote but whose answer never reached the client
// (the connection died first) is sent again by kafkajs, and the broker recognises the batch by its producer id and
// sequence number and does not store it twice. Forced here: every connection of the producer goes through a proxy that
// forwards the first Produce request, drops the broker's answer and closes the connection. The partition's log on disk
// is read back batch by batch (the record-batch header: producer id, base sequence, record count).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { connect, createServer, Socket, type Server } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Kafka, logLevel } from "kafkajs";
import { ensureTopics, KafkaBus } from "../../pipeline/runtime/kafka-bus.ts";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { physicalTopic } from "../../pipeline/topology.ts";

const run = promisify(execFile);
const infraDir = process.env.TRAWL_INFRA_DIR ?? join(import.meta.dirname, "..", "..", ".infra");
const PRODUCE = 0;

/** Record batches of a partition's log on the local broker's disk (Kafka's RecordBatch v2 header). */
function batches(topic: string): { baseOffset: number; producerId: number; baseSequence: number; records: number }[] {
  const dir = join(infraDir, "kafka", "data", `${topic}-0`);
  if (!existsSync(dir)) throw new Error(`no ${dir}: the broker at KAFKA_BROKERS was not started from ${infraDir} (set TRAWL_INFRA_DIR to its directory)`);
  const out = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".log")).sort()) {
    const log = readFileSync(join(dir, file));
    for (let at = 0; at + 61 <= log.length; at += 12 + log.readInt32BE(at + 8)) {
      out.push({ baseOffset: Number(log.readBigInt64BE(at)), producerId: Number(log.readBigInt64BE(at + 43)), baseSequence: log.readInt32BE(at + 53), records: log.readInt32BE(at + 57) });
    }
  }
  return out;
}

/**
 * A TCP proxy in front of each broker. While `armed`, the next Produce request passes to the broker, its answer is
 * dropped and the client's connection closed: the broker wrote the records, the client cannot know it.
 */
class AnswerDroppingProxy {
  armed = false;
  readonly produceRequests: number[] = [];
  private readonly servers = new Map<string, Promise<{ server: Server; port: number }>>();
  private readonly sockets = new Set<Socket>();

  /** The proxy's port for a broker (started on first use). */
  portFor(host: string, port: number): Promise<number> {
    const key = `${host}:${port}`;
    let entry = this.servers.get(key);
    if (!entry) {
      entry = new Promise((resolve) => {
        const server = createServer((client) => this.pipe(client, host, port));
        server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port }));
      });
      this.servers.set(key, entry);
    }
    return entry.then((e) => e.port);
  }

  private pipe(client: Socket, host: string, port: number): void {
    const broker = connect(port, host);
    for (const s of [client, broker]) {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
      s.on("error", () => this.sockets.delete(s)); // the other side's close ends this one too
    }
    client.on("close", () => broker.destroy());
    broker.on("close", () => client.destroy());
    let dropping: number | undefined;
    frames(client, (frame) => {
      if (frame.readInt16BE(4) === PRODUCE) {
        this.produceRequests.push(Date.now());
        if (this.armed) {
          this.armed = false;
          dropping = frame.readInt32BE(8);
        }
      }
      broker.write(frame);
    });
    frames(broker, (frame) => {
      if (dropping !== undefined && frame.readInt32BE(4) === dropping) client.destroy();
      else client.write(frame);
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await Promise.all([...this.servers.values()].map(async (e) => new Promise((r) => e.then(({ server }) => server.close(r)))));
  }
}

/** Calls `each` with every whole Kafka frame (int32 size, then the frame) read from `socket`. */
function frames(socket: Socket, each: (frame: Buffer) => void): void {
  let buffered = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
      const size = 4 + buffered.readInt32BE(0);
      each(buffered.subarray(0, size));
      buffered = buffered.subarray(size);
    }
  });
}

describe("Kafka producer idempotence (cluster mode)", () => {
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const log = createLogger("error");
  const proxy = new AnswerDroppingProxy();
  let config: Config;
  let bus: KafkaBus;
  beforeAll(async () => {
    config = loadConfig(process.env, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 1 });
    const brokers = config.kafkaBrokers.split(",");
    await ensureTopics(new Kafka({ brokers, logLevel: logLevel.NOTHING }), config, log);
    const kafka = new Kafka({
      clientId: "idempotence-test",
      brokers,
      logLevel: logLevel.NOTHING,
      retry: { initialRetryTime: 200, retries: 8 },
      // every connection, the first to the bootstrap broker and those to the brokers metadata names, through the proxy
      socketFactory: ({ host, port, onConnect }) => {
        const socket = new Socket();
        void proxy.portFor(host, port).then((p) => socket.connect(p, "127.0.0.1", onConnect));
        return socket;
      },
    });
    bus = new KafkaBus(kafka, config.topicPrefix);
    await bus.connect();
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await proxy.close();
  });

  it("stores a batch once when its answer was lost and kafkajs sent it again", async () => {
    const topic = physicalTopic(config.topicPrefix, "crawl.pages");
    const emit = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ topic: "crawl.pages" as const, key: `k${from + i}`, value: { i: from + i } }));
    await bus.produce(emit(0, 5));
    const before = proxy.produceRequests.length;
    proxy.armed = true;
    await bus.produce(emit(5, 20));
    // the answer was dropped, so the same request went out again
    expect(proxy.armed).toBe(false);
    expect(proxy.produceRequests.length - before).toBeGreaterThanOrEqual(2);
    await bus.produce(emit(25, 5));

    // every record once, in order (read back with kcat, another client than the one under test)
    const { stdout } = await run("kcat", ["-b", config.kafkaBrokers, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k\\n"]);
    expect(stdout.split("\n").filter(Boolean)).toEqual(emit(0, 30).map((m) => m.key));
    // on disk: three batches of one producer id, sequences 0, 5 and 25 (the resent batch was not appended again)
    const stored = batches(topic);
    expect(stored.map((b) => [b.baseSequence, b.records])).toEqual([[0, 5], [5, 20], [25, 5]]);
    expect(new Set(stored.map((b) => b.producerId)).size).toBe(1);
    expect(stored[0]!.producerId).toBeGreaterThanOrEqual(0);
  });
});
