// The one nesting limit for JSON text Trawl parses from outside (request bodies, /v2/parse's `options` part and the
// schemas inside them, JSON-LD in pages): the depth is counted by a scan of the text before JSON.parse, so a
// 200,000-level input is refused in a millisecond instead of being parsed and then overflowing a recursive reader
// (ajv, JSON.stringify, a walk) downstream.

/** Deeper than any request body needs (a JSON Schema in jsonOptions included); bounds recursion downstream. */
export const MAX_JSON_DEPTH = 64;

/** Greatest nesting of arrays and objects in JSON text (brackets inside strings are not counted); the scan stops as
 * soon as the depth passes `stopAbove` (the result is then `stopAbove + 1`). */
export function jsonDepth(text: string, stopAbove = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max && (max = depth) > stopAbove) return max;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** JSON text nested deeper than MAX_JSON_DEPTH. */
export class JsonTooDeepError extends Error {
  readonly max: number;
  constructor(max: number) {
    super(`JSON nested deeper than ${max} levels`);
    this.max = max;
    this.name = "JsonTooDeepError";
  }
}

/** JSON.parse of outside text under the nesting limit: JsonTooDeepError when too deep (checked first, without
 * parsing), SyntaxError when malformed. */
export function parseJsonText(text: string, max = MAX_JSON_DEPTH): unknown {
  if (jsonDepth(text, max) > max) throw new JsonTooDeepError(max);
  return JSON.parse(text);
}
