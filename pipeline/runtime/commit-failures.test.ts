import { describe, expect, it } from "vitest";
import { COMMIT_FAILING_MAX_MS, COMMIT_FAILURES_MAX, CommitFailures } from "./commit-failures.ts";

describe("CommitFailures", () => {
  it("asks to rejoin at the third consecutive failure, then starts over", () => {
    let t = 0;
    const f = new CommitFailures(() => t);
    expect(COMMIT_FAILURES_MAX).toBe(3);
    expect([f.failed(), f.failed(), f.failed()]).toEqual([false, false, true]);
    t += 100;
    expect([f.failed(), f.failed(), f.failed()]).toEqual([false, false, true]);
  });

  it("forgives failures a success separates", () => {
    let t = 0;
    const f = new CommitFailures(() => t);
    for (let i = 0; i < 10; i++) {
      t += 1000;
      expect(f.failed()).toBe(false);
      expect(f.failed()).toBe(false);
      f.succeeded();
    }
  });

  it("asks to rejoin when the failures have lasted 30 s, however few", () => {
    let t = 1000;
    const f = new CommitFailures(() => t);
    expect(f.failed()).toBe(false);
    t += COMMIT_FAILING_MAX_MS - 1;
    expect(f.failed()).toBe(false);
    f.succeeded();
    // a new run counts from its own first failure
    t += 5;
    expect(f.failed()).toBe(false);
    t += COMMIT_FAILING_MAX_MS;
    expect(f.failed()).toBe(true);
  });
});
