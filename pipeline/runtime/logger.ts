// Structured logs (pino). One root logger made by main; components take a child.
import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { ...base }, timestamp: pino.stdTimeFunctions.isoTime });
}
