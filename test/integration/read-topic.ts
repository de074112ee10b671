// Reads a topic from its beginning with a consumer of its own (tests): the values, in order per partition, until
// `enough` says so or `timeoutMs` passed.
import type { KafkaClients } from "../../pipeline/runtime/kafka-clients.ts";

export async function readTopic(kafka: KafkaClients, topic: string, groupId: string, enough: (values: Buffer[]) => boolean, timeoutMs: number): Promise<Buffer[]> {
  const consumer = kafka.consumer({ groupId, autocommit: false });
  const values: Buffer[] = [];
  try {
    const stream = await consumer.consume({ topics: [topic], mode: "earliest", autocommit: false });
    stream.on("data", (message) => void values.push(message.value));
    const end = Date.now() + timeoutMs;
    while (!enough(values) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    await stream.close();
  } finally {
    await consumer.close(true);
  }
  return values;
}
