// The rules provider's json, run by the convert worker on the tree it has just parsed (loaded there by URL as the
// convert pool's page analyzer; the composition root installs it when the rules provider is the one in use). The page
// is then parsed once, not twice, and the work is off the event loop under the convert time limit. The result is
// plain data (source paths computed now, before cleaning changes the tree) and travels in pages.extract as `rules`.
import type { ParentNode } from "./dom.ts";
import type { JsonRequest } from "./provider.ts";
import { rulesJson, type RulesResult } from "./rules.ts";

/** Same shape as convert's PageAnalyzer (a stage does not import another: the shape is the contract). */
export function analyze(doc: ParentNode, options: { formats: readonly string[]; json?: JsonRequest }): Record<string, unknown> | undefined {
  if (!options.formats.includes("json")) return undefined;
  const { data, sources, warnings } = rulesJson(doc, options.json ?? {});
  const result: RulesResult = { ...(data !== undefined ? { data } : {}), sources: JSON.parse(JSON.stringify(sources)) as Record<string, unknown>, warnings };
  return result as unknown as Record<string, unknown>;
}
