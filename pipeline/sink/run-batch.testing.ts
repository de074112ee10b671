// Test helper: one batch of the sink as the batch step runs it (prepare, handle each message, beforeProduce), without
// producing; the emissions it would produce.
import type { CrawlPage } from "../../schemas/index.ts";
import type { Consumed } from "../runtime/bus.ts";
import type { SinkProcessor } from "./sink.ts";

export async function runSinkBatch(sink: SinkProcessor, msgs: Consumed<CrawlPage>[]) {
  const batch = sink.createBatch();
  await sink.prepare(msgs, batch);
  const out = [];
  for (const m of msgs) out.push(...(await sink.handle(m, batch)));
  await sink.beforeProduce(batch);
  return out;
}
