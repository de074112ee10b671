// kafkajs 2.2.4 (its last release) re-arms a 1 ms timer on every broker connection for as long as the connection lives:
// `scheduleCheckPendingRequests` runs after every check, and with nothing pending and no throttle it sets a timeout of
// `throttledUntil - Date.now()` = -Date.now(), which Node turns into 1 ms (and warns: TimeoutNegativeWarning). An idle
// `trawl all` woke ~1,000 times a second for it. kafkajs#1704 / #1751; the upstream fix (PRs #1755, #1768) was never
// released. Patched here: with nothing pending, nothing is scheduled: `push` and every fulfilled request check the
// queue again themselves, and a throttle still schedules its check.
import { createRequire } from "node:module";

interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
}

const CHECK_PENDING_REQUESTS_INTERVAL = 10; // kafkajs' own constant

const require = createRequire(import.meta.url);
const RequestQueue = require("kafkajs/src/network/requestQueue/index.js") as { prototype: RequestQueueLike & { scheduleCheckPendingRequests(): void } };

RequestQueue.prototype.scheduleCheckPendingRequests = function (this: RequestQueueLike) {
  if (this.throttleCheckTimeoutId) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  if (this.pending.length === 0 && untilUnthrottled <= 0) return;
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null;
    this.checkPendingRequests();
  }, untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL);
};
