// A logger for tests whose subject is what Trawl warns about: its warnings are kept, in order.
import { Writable } from "node:stream";
import pino, { type Logger } from "pino";

export function warningsLogger(): { log: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = JSON.parse(String(chunk)) as { level: number; msg: string };
      if (line.level === 40) warnings.push(line.msg);
      done();
    },
  });
  return { log: pino({ level: "warn" }, sink), warnings };
}
