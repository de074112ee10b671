// The identity of a processor (name, topic, the topic's schema, consumer group, broadcast, sparse) as pipeline/topology.ts
// declares it. Every stage's processor extends this, so none restates its topic or group.
import type { SchemaName } from "../../schemas/index.ts";
import { processorIdentity, type LogicalTopic, type ProcessorName } from "../topology.ts";

export abstract class DeclaredProcessor {
  readonly name: ProcessorName;
  readonly topic: LogicalTopic;
  readonly schema: SchemaName;
  readonly group: string;
  readonly broadcast: boolean;
  readonly sparse: boolean;

  constructor(name: ProcessorName) {
    const id = processorIdentity(name);
    this.name = id.name;
    this.topic = id.topic;
    this.schema = id.schema;
    this.group = id.group;
    this.broadcast = id.broadcast;
    this.sparse = id.sparse;
  }
}
