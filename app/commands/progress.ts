// Progress of a CLI crawl: a redrawn bar on a terminal, a plain line every few seconds otherwise.
import type { ReasonCounts } from "../../pipeline/store/url-reason.ts";

export interface Progress {
  done: number;
  found: number;
  failed: number;
  /** the crawl's URLs by reason (the crawl record's counts) */
  reasons?: ReasonCounts;
}

/** The reasons other than queued and fetched (the bar shows those), e.g. `out_of_scope 3, robots_blocked 1`. */
export function reasonSummary(reasons: ReasonCounts | undefined): string {
  return Object.entries(reasons ?? {}).filter(([r, n]) => r !== "queued" && r !== "fetched" && n > 0).map(([r, n]) => `${r} ${n}`).join(", ");
}

export function progressLine(p: Progress, elapsedMs: number, width = 30): string {
  const rate = elapsedMs > 0 ? (p.done / elapsedMs) * 1000 : 0;
  const total = Math.max(p.found, 1);
  const filled = Math.min(width, Math.round(((p.done + p.failed) / total) * width));
  const bar = "#".repeat(filled) + "-".repeat(width - filled);
  const why = reasonSummary(p.reasons);
  return `[${bar}] ${p.done} done / ${p.found} found / ${p.failed} failed  ${rate.toFixed(1)} pages/s${why ? `  (${why})` : ""}`;
}

export class ProgressReporter {
  private readonly tty: boolean;
  private readonly out: NodeJS.WriteStream;
  private readonly started = Date.now();
  private lastPlain = 0;

  constructor(out: NodeJS.WriteStream) {
    this.out = out;
    this.tty = Boolean(out.isTTY);
  }

  update(p: Progress, force = false): void {
    const line = progressLine(p, Date.now() - this.started);
    if (this.tty) {
      this.out.write(`\r${line}\x1b[K`);
    } else if (force || Date.now() - this.lastPlain >= 2000) {
      this.out.write(line + "\n");
      this.lastPlain = Date.now();
    }
  }

  end(message: string): void {
    if (this.tty) this.out.write("\n");
    this.out.write(message + "\n");
  }
}
