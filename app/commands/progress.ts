// Progress of a CLI crawl: a redrawn bar on a terminal, a plain line every few seconds otherwise.

export interface Progress {
  done: number;
  found: number;
  failed: number;
}

export function progressLine(p: Progress, elapsedMs: number, width = 30): string {
  const rate = elapsedMs > 0 ? (p.done / elapsedMs) * 1000 : 0;
  const total = Math.max(p.found, 1);
  const filled = Math.min(width, Math.round(((p.done + p.failed) / total) * width));
  const bar = "#".repeat(filled) + "-".repeat(width - filled);
  return `[${bar}] ${p.done} done / ${p.found} found / ${p.failed} failed  ${rate.toFixed(1)} pages/s`;
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
