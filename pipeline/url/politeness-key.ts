// The unit of politeness: whose fetches share one limit, one Retry-After pause and one Crawl-delay, in every crawl,
// team and fetch-render replica. fetch.tasks and render.tasks are keyed by it, so one replica owns it (DESIGN.md
// section 2), and fetch-render's gates and adaptive limits are keyed by it. POLITENESS_SCOPE: `host` (host and port,
// the default) or `domain` (the registrable domain by the public suffix list: a.example.com and b.example.com share;
// an IP address or a name without a public suffix, such as localhost, stays its host).
import { getDomain } from "tldts";

export const POLITENESS_SCOPES = ["host", "domain"] as const;
export type PolitenessScope = (typeof POLITENESS_SCOPES)[number];

export function politenessKey(url: string, scope: PolitenessScope = "host"): string {
  const { host, hostname } = new URL(url);
  if (scope === "host") return host;
  return getDomain(hostname, { allowPrivateDomains: false }) ?? host;
}
