// The embedded bus's log records (embedded-bus.ts): how a message is written to a partition's log and read back.
/**
 * One record of a partition's log: `{"o":<offset>,"k":<key>,"j":<the value's JSON, as it is>}` (data format 3).
 * Format 2 wrote the value as a JSON string (`"v":"{\\"type\\":…}"`), escaping every page a second time.
 */
export function busRecord(offset: number, key: string, json: string): string {
  return `{"o":${offset},"k":${JSON.stringify(key)},"j":${json}}`;
}

/**
 * Reads a record of either format. A format 3 record's value is sliced out, not parsed: `,"j":` cannot occur
 * inside the key (a JSON string holds no raw quote), so its first occurrence ends the head.
 */
export function parseBusRecord(line: string): { o: number; k: string; v: string } {
  const at = line.indexOf(',"j":');
  if (at > 0 && line.startsWith('{"o":') && line.endsWith("}")) {
    const head = JSON.parse(`${line.slice(0, at)}}`) as { o: number; k: string };
    return { o: head.o, k: head.k, v: line.slice(at + 5, -1) };
  }
  return JSON.parse(line) as { o: number; k: string; v: string };
}
