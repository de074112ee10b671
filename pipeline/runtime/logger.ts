// Structured logs (pino). One root logger made by main; components take a child.
import { pino, type Logger } from "pino";

export type { Logger };

/** `fd` 2: logs to standard error (commands whose output is on standard output). */
export function createLogger(level: string, base: Record<string, unknown> = {}, fd?: 2): Logger {
  const options = { level, base: { ...base }, timestamp: pino.stdTimeFunctions.isoTime };
  return fd ? pino(options, pino.destination(fd)) : pino(options);
}
