// Trawl's producer is idempotent: a produce request that the broker wrote but whose answer never reached the client
// (the connection died first) is sent again by the client, and the broker recognises the batch by its producer id and
// sequence number and does not store it twice. Forced here: every connection of the producer goes through a proxy
// (the client bootstraps through it, and the proxy gives its own port for each broker in the Metadata answers) that
// forwards the first Produce request, drops the broker's answer and closes the connection. The partition's log on disk
// is read back batch by batch (the record-batch header: producer id, base sequence, record count).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKafka, ensureTopics, KafkaBus } from "../../pipeline/runtime/kafka-bus.ts";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { physicalTopic } from "../../pipeline/topology.ts";

const run = promisify(execFile);
const infraDir = process.env.TRAWL_INFRA_DIR ?? join(import.meta.dirname, "..", "..", ".infra");
const PRODUCE = 0;
const METADATA = 3;

/** An unsigned varint at `at`: its value and length. */
function uvarint(buf: Buffer, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (let i = at; ; i++) {
    const b = buf[i] as number;
    value |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [value, i - at + 1];
    shift += 7;
  }
}

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
  private readonly ports = new Map<string, number>();
  private readonly sockets = new Set<Socket>();

  /**
   * A Metadata answer (flexible versions, 9 on: the client's) with each broker's port replaced by its proxy's: the
   * brokers array follows the header (correlation id, tagged fields) and the throttle time; each broker is a node id,
   * a compact host string and the port (same length: rewritten in place).
   */
  private rewriteMetadata(frame: Buffer): void {
    let at = 4 + 4; // size, correlation id
    at += uvarint(frame, at)[1]; // header tagged fields (none)
    at += 4; // throttle time
    const [count, n] = uvarint(frame, at);
    at += n;
    for (let i = 0; i < count - 1; i++) {
      at += 4; // node id
      const [len, m] = uvarint(frame, at);
      at += m;
      const host = frame.subarray(at, at + len - 1).toString();
      at += len - 1;
      const port = frame.readInt32BE(at);
      const proxied = this.ports.get(`${host}:${port}`);
      if (proxied === undefined) throw new Error(`no proxy for ${host}:${port}`);
      frame.writeInt32BE(proxied, at);
      at += 4;
      const [rack, r] = uvarint(frame, at); // compact nullable string
      at += r + Math.max(0, rack - 1);
      at += uvarint(frame, at)[1]; // tagged fields
    }
  }

  /** The proxy's port for a broker (started on first use). */
  portFor(host: string, port: number): Promise<number> {
    const key = `${host}:${port}`;
    let entry = this.servers.get(key);
    if (!entry) {
      entry = new Promise((resolve) => {
        const server = createServer((client) => this.pipe(client, host, port));
        server.listen(0, "127.0.0.1", () => {
          const p = (server.address() as { port: number }).port;
          this.ports.set(key, p);
          resolve({ server, port: p });
        });
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
    const metadataRequests = new Set<number>();
    frames(client, (frame) => {
      if (frame.readInt16BE(4) === METADATA) {
        if (frame.readInt16BE(6) < 9) throw new Error("a Metadata request of a version before 9: the proxy reads flexible answers only");
        metadataRequests.add(frame.readInt32BE(8));
      }
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
      if (metadataRequests.delete(frame.readInt32BE(4))) this.rewriteMetadata(frame);
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

/** The brokers the cluster names (node id → host and port). */
async function withMetadata(config: Config): Promise<Map<number, { host: string; port: number }>> {
  const admin = createKafka(config, "idempotence-brokers", createLogger("error")).admin();
  try {
    return (await admin.metadata({ topics: [], forceUpdate: true })).brokers;
  } finally {
    await admin.close();
  }
}

describe("Kafka producer idempotence (cluster mode)", () => {
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const log = createLogger("error");
  const proxy = new AnswerDroppingProxy();
  let config: Config;
  let bus: KafkaBus;
  beforeAll(async () => {
    config = loadConfig(process.env, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 1 });
    await ensureTopics(createKafka(config, "idempotence-setup", log), config, log);
    // every broker the cluster names gets a proxy; the client bootstraps through the first one's
    const named = [...(await withMetadata(config)).values()];
    const ports = await Promise.all(named.map((b) => proxy.portFor(b.host, b.port)));
    const proxied = loadConfig({ ...process.env, KAFKA_BROKERS: `127.0.0.1:${ports[0]}` }, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 1 });
    bus = new KafkaBus(createKafka(proxied, "idempotence-test", log), config.topicPrefix);
    await bus.connect();
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await proxy.close();
  });

  it("stores a batch once when its answer was lost and the client sent it again", async () => {
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
