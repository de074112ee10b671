// A timer a loop naps on that another part of it can end early (the runner's fetch loop: a batch ended, a fetch
// returned, the assignment changed).

/** Wakes the fetch loop when a batch ends, a fetch returns or the assignment changes; else it naps. */
export class Waker {
  private wake: (() => void) | undefined;
  nap(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
  ring(): void {
    this.wake?.();
  }
}
