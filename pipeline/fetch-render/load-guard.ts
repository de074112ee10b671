// MAX_CPU / MAX_RAM: above either threshold a worker starts no new page until the machine's load drops again.
import { cpus, freemem, totalmem } from "node:os";
import { sleep } from "../runtime/retry.ts";

export interface LoadSample {
  /** fraction of the machine's CPU time in use since the previous sample */
  cpu: number;
  /** fraction of the machine's memory in use */
  ram: number;
}

/** Samples the whole machine (not only this process), like the anchor's self-hosted workers. */
export function systemSampler(): () => LoadSample {
  let last = snapshot();
  return () => {
    const now = snapshot();
    const busy = now.busy - last.busy;
    const total = now.total - last.total;
    last = now;
    return { cpu: total > 0 ? busy / total : 0, ram: 1 - freemem() / totalmem() };
  };
}

function snapshot(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of cpus()) {
    const t = c.times;
    busy += t.user + t.nice + t.sys + t.irq;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return { busy, total };
}

export class LoadGuard {
  private readonly maxCpu: number;
  private readonly maxRam: number;
  private readonly sample: () => LoadSample;
  private readonly intervalMs: number;
  private current: LoadSample = { cpu: 0, ram: 0 };
  private sampledAt = 0;
  private readonly onOverload: (s: LoadSample) => void;
  /** An overload is reported once per episode, not once per waiting worker. */
  private reported = false;

  constructor(opts: { maxCpu: number; maxRam: number; sample: () => LoadSample; intervalMs?: number; onOverload?: (s: LoadSample) => void }) {
    this.maxCpu = opts.maxCpu;
    this.maxRam = opts.maxRam;
    this.sample = opts.sample;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.onOverload = opts.onOverload ?? (() => {});
  }

  private read(): LoadSample {
    const now = Date.now();
    if (now - this.sampledAt >= this.intervalMs) {
      this.current = this.sample();
      this.sampledAt = now;
    }
    return this.current;
  }

  overloaded(): boolean {
    const s = this.read();
    const over = s.cpu > this.maxCpu || s.ram > this.maxRam;
    if (!over) this.reported = false;
    return over;
  }

  /** Resolves once the machine is below both thresholds (at once when it already is). */
  async admit(signal?: AbortSignal): Promise<void> {
    while (this.overloaded() && !signal?.aborted) {
      if (!this.reported) this.onOverload(this.current);
      this.reported = true;
      await sleep(this.intervalMs, signal);
    }
  }
}
