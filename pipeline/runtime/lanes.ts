// The consume step of a processor in "keyed" mode: one partition's messages run in lanes (`processor.lane`, by default
// the message key). A lane runs its messages in offset order, what it has queued as one batch (prepare, handle each,
// produce the emissions phase by phase around beforeProduce / afterPhase / afterProduce, as batch.ts does for a whole
// batch); lanes run at once and independently, so a message that takes long (a webhook endpoint that does not answer)
// holds only its own lane. The loops (Kafka, embedded) keep fetching while a partition has fewer than
// `processor.concurrency` messages not done (and WINDOW_CHARS of their values, and MAX_HELD offsets not committed); a
// message is done once its lane batch's emissions and hooks are acknowledged, and the committed offset is the end of
// the longest done prefix of the partition. So offsets still move only after side effects; a crash redelivers what was
// not done, and with it the done messages behind the oldest one not done (at-least-once).
import { phases, type Bus, type Consumed, type Emission, type Processor } from "./bus.ts";
import { decodeBatch, messageHandler, produceWithHooks, retryForever, undecodedEmissions, type RawMessage } from "./batch.ts";
import type { Logger } from "./logger.ts";
import { sleep } from "./retry.ts";
import { turn } from "./yield-turn.ts";

/** Characters of the values of a partition's messages not done, at most (at least one message). */
export const WINDOW_CHARS = 4 * 1024 * 1024;
/** Wait before a lane tries a failed batch again. */
const LANE_RETRY_MS = 1000;
/** Offsets not committed of a partition, at most (done ones behind one that is not are kept as offsets only). */
export const MAX_HELD = 10_000;

interface Held {
  offset: string;
  done: boolean;
  chars: number;
}

class Window<T> {
  /** Messages accepted and not committed, in offset order. */
  held: Held[] = [];
  /** Messages not done, and the characters of their values. */
  undone = 0;
  chars = 0;
  /** Messages waiting per lane; a lane in `running` has a worker. */
  lanes = new Map<string, { msg: Consumed<T>; held: Held }[]>();
  running = new Set<string>();
  /** Fetches waiting for room. */
  room: (() => void)[] = [];

  full(limit: number): boolean {
    return this.undone >= limit || (this.undone > 0 && this.chars >= WINDOW_CHARS) || this.held.length >= MAX_HELD;
  }

  wake(): void {
    const room = this.room;
    this.room = [];
    for (const f of room) f();
  }
}

export interface LaneHandler {
  /**
   * Takes a fetched batch of one partition into lanes, waiting while the partition is full. Resolves with how many of
   * its first messages were taken (fewer only when stopping or after `reset`): the fetch position moves that far.
   */
  accept(partition: number, messages: RawMessage[]): Promise<number>;
  /**
   * A rebalance: the partitions given (every partition without an argument) start over from their committed offset;
   * their work in flight finishes but commits nothing. The others' lanes go on as they were.
   */
  reset(partitions?: Iterable<number>): void;
  /** At a stop (after the loops stopped fetching): waits for the messages in flight; the waiting ones are not done. */
  drain(): Promise<void>;
}

/** `commit(partition, next)`: every message of `partition` below offset `next` is done. */
export function laneHandler<T, B>(processor: Processor<T, B>, bus: Bus, log: Logger, stopping: AbortSignal, commit: (partition: number, next: string) => void): LaneHandler {
  const handleOne = messageHandler(processor, log, stopping);
  const retry = retryForever(log, stopping);
  const deliver = (list: Emission[]) =>
    retry(async () => {
      for (const phase of phases(list)) await bus.produce(phase);
    }, "dead-letter delivery");
  let windows = new Map<number, Window<T>>();
  const working = new Set<Promise<void>>();
  const wakeAll = () => {
    for (const w of windows.values()) w.wake();
  };
  stopping.addEventListener("abort", wakeAll, { once: true });

  function settle(partition: number, win: Window<T>, held: Held): void {
    held.done = true;
    win.undone--;
    win.chars -= held.chars;
    let last: Held | undefined;
    while (win.held[0]?.done) last = win.held.shift();
    if (last && windows.get(partition) === win) commit(partition, (BigInt(last.offset) + 1n).toString());
    win.wake();
  }

  function runLane(partition: number, win: Window<T>, lane: string): void {
    if (win.running.has(lane)) return;
    win.running.add(lane);
    const worker = (async () => {
      const queue = win.lanes.get(lane) ?? [];
      // after a stop or a rebalance nothing new starts: the messages are delivered again from the committed offset
      while (queue.length && !stopping.aborted && windows.get(partition) === win) {
        // what the lane has queued is one batch: handled in order, then its emissions produced around the hooks
        const items = queue.splice(0);
        const scratch = processor.createBatch();
        const emissions: Emission[] = [];
        let handled = 0;
        try {
          if (processor.prepare) await retry(() => processor.prepare?.(items.map((i) => i.msg), scratch) ?? Promise.resolve(), "prepare");
          for (const item of items) {
            await turn(); // between messages of a long lane (yield-turn.ts)
            if (stopping.aborted) break;
            emissions.push(...(await handleOne(item.msg, scratch)));
            handled++;
          }
          await retry(() => produceWithHooks(processor, bus, scratch, emissions), "delivery");
        } catch (err) {
          // while stopping (retriable failures are retried until then): not done, delivered again after the restart
          if (stopping.aborted) break;
          // a hook that failed for good (a bug): the lane tries again later, as a loop redelivers a failed batch
          log.error({ err, partition, offset: items[0]?.msg.offset }, "lane batch failed; trying again");
          queue.unshift(...items);
          await sleep(LANE_RETRY_MS, stopping);
          continue;
        }
        for (const item of items.slice(0, handled)) settle(partition, win, item.held);
        if (handled < items.length) break;
      }
      win.running.delete(lane);
      if (queue.length === 0 || stopping.aborted || windows.get(partition) !== win) win.lanes.delete(lane);
    })();
    working.add(worker);
    void worker.finally(() => working.delete(worker));
  }

  return {
    async accept(partition, messages) {
      let win = windows.get(partition);
      if (!win) windows.set(partition, (win = new Window<T>()));
      const wanted = processor.skip ? messages.filter((m) => !processor.skip?.(m.key, m.value)) : messages;
      const decoded = decodeBatch<T>(processor.topic, processor.schema, partition, wanted);
      // messages with nothing to run (skipped, undecodable) are done once their dead letters are acknowledged
      await deliver(undecodedEmissions(processor as Processor<T, unknown>, log, partition, decoded));
      const ok = new Map(decoded.ok.map((m) => [m.offset, m]));
      let taken = 0;
      for (const m of messages) {
        while (win.full(processor.concurrency) && !stopping.aborted && windows.get(partition) === win) {
          await new Promise<void>((resolve) => (win as Window<T>).room.push(resolve));
        }
        if (stopping.aborted || windows.get(partition) !== win) break;
        const held: Held = { offset: m.offset, done: false, chars: m.value?.length ?? 0 };
        win.held.push(held);
        win.undone++;
        win.chars += held.chars;
        taken++;
        const msg = ok.get(m.offset);
        if (!msg) {
          settle(partition, win, held);
          continue;
        }
        const lane = processor.lane?.(msg) ?? msg.key;
        const queue = win.lanes.get(lane) ?? [];
        queue.push({ msg, held });
        win.lanes.set(lane, queue);
        runLane(partition, win, lane);
      }
      return taken;
    },
    reset(partitions) {
      if (!partitions) {
        const old = windows;
        windows = new Map();
        for (const w of old.values()) w.wake();
        return;
      }
      for (const p of partitions) {
        const w = windows.get(p);
        windows.delete(p);
        w?.wake();
      }
    },
    async drain() {
      wakeAll();
      while (working.size) await Promise.allSettled([...working]);
    },
  };
}
