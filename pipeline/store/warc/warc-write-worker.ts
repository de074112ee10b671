// The WARC writer thread (warc-write-thread.ts posts to it): builds the records of the items it is sent (digests,
// serialization), gzips them and writes them with their CDXJ lines, off the main event loop, which in embedded mode
// runs the whole crawl. It answers each batch once its records are on disk (or with the error of each job that failed).
import { parentPort, workerData } from "node:worker_threads";
import { join } from "node:path";
import type { WireMessage, WireReply } from "./warc-write-thread.ts";
import { WarcWriters, type WarcItem, type WarcWritersOptions } from "./warc-writers.ts";

const opts = workerData as Omit<WarcWritersOptions, "now">;
const writers = new WarcWriters({ ...opts, now: Date.now }, (crawlId) => join(opts.root, crawlId));

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

async function run(msg: WireMessage): Promise<(string | null)[]> {
  if (msg.close !== undefined) {
    await (msg.close === "*" ? writers.close() : writers.closeCrawl(msg.close));
    return [null];
  }
  const payloads = Buffer.from(msg.buffer);
  return Promise.all(msg.jobs.map(async (job) => {
    const items = job.items.map((item): WarcItem => {
      if (item.kind !== "exchange") return item;
      const { payloadAt, payloadLength, ...exchange } = item.exchange;
      return { kind: "exchange", context: item.context, exchange: { ...exchange, payload: payloads.subarray(payloadAt, payloadAt + payloadLength) } };
    });
    try {
      await writers.write(job.crawlId, items);
      return null;
    } catch (err) {
      return message(err);
    }
  }));
}

parentPort?.on("message", (msg: WireMessage) => {
  run(msg).then(
    (errors) => parentPort?.postMessage({ id: msg.id, errors } satisfies WireReply),
    (err: unknown) => parentPort?.postMessage({ id: msg.id, errors: [message(err)] } satisfies WireReply),
  );
});
