// What one incarnation of a runner's group member holds (runner.ts): its clients, its partitions' leases and positions,
// the batches in flight. A restart (crash, commits that keep failing) makes a new one.
import type { Consumer, MessagesStream } from "@platformatic/kafka";

export /** One incarnation of the group member: a restart (crash, commits that keep failing) makes a new one. */
interface Member {
  consumer: Consumer;
  /** fetches on connections of their own: a long poll never delays the member's heartbeats or commits */
  fetcher: Consumer;
  stream: MessagesStream<Buffer, Buffer, Buffer, Buffer>;
  /** partitions this loop works on, each with the lease it got when assigned (a batch of an older lease is stale) */
  leases: Map<number, object>;
  /** the next offset to fetch of each owned partition whose position is known */
  positions: Map<number, bigint>;
  /** partitions with a batch in flight, and the signal that abandons it */
  busy: Map<number, AbortController>;
  /** nodes whose last fetch brought nothing: fetched like a sparse loop until a message comes */
  idle: Set<number>;
  /** the classic protocol joined a new generation: every partition starts over from its committed offset */
  rejoined: boolean;
  closed: boolean;
  loop: Promise<void>;
  timer: NodeJS.Timeout | undefined;
}

/** What a member's fetcher answers (one fetch request). */
export type FetchResponse = Awaited<ReturnType<Consumer["fetch"]>>;
