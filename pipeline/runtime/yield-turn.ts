// Long promise chains that never wait on I/O run as one task of the event loop and hold every socket until they end.
// An embedded crawl has such chains: its bus is in memory, its logs are written synchronously, and a consume loop goes
// from one batch to the next, a stage from one message to the next, through promises that are already resolved. A
// status GET that arrived meanwhile waited for the whole chain: with 200 readers polling, half the reads of a crawl
// waited 18 ms and the worst 1 % 70-90 ms (bench `status`). The loops call `turn()` between units of work; once
// TURN_SLICE_MS have passed since the last turn, it resolves in a setImmediate, and callers that arrive in the same
// slice share that one wait. setImmediate runs in the check phase, right after the poll for I/O: from a timer or a
// check-phase callback the poll comes first, so sockets and timers are served between slices; from an I/O callback it
// is the current iteration's check phase, and the poll comes at the next turn (at most two slices without one).
// Between slices it returns undefined: `await undefined` costs a microtask, not a trip round the event loop.

/** Time a chain of work may hold the event loop before it lets I/O in. */
export const TURN_SLICE_MS = 5;

let sliceStart = performance.now();
let pending: Promise<void> | null = null;

/** undefined while the current slice lasts; then a promise resolved in a setImmediate, one for every caller. */
export function turn(): Promise<void> | undefined {
  if (pending) return pending;
  if (performance.now() - sliceStart < TURN_SLICE_MS) return undefined;
  pending = new Promise<void>((resolve) =>
    setImmediate(() => {
      pending = null;
      sliceStart = performance.now();
      resolve();
    }),
  );
  return pending;
}
