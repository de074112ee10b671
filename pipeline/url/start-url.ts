// Validation of a crawl's or a scrape's start URL (the anchor's rules, with private targets governed by one setting)
// and of a webhook's URL (private destinations refused already at submit, unless ALLOW_LOCAL_WEBHOOKS).
// Host names are not resolved here: the guarded agent checks the address actually connected to.
import { isIpLiteral, isPrivateAddress } from "../net/private-address.ts";
import { invalidField } from "../runtime/errors.ts";

const invalid = (message: string) => invalidField(["url"], message);

/** localhost names and IP literals outside the public internet (every spelling, see private-address.ts). */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || (isIpLiteral(host) && isPrivateAddress(host));
}

/** The URL to fetch (a scheme added when missing); throws RequestError when it cannot be crawled. */
export function checkStartUrl(raw: string, allowPrivate: boolean): string {
  let text = raw.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) text = `http://${text}`;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw invalid("Invalid URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw invalid("URL uses unsupported protocol");
  const host = u.hostname.replace(/^\[|\]$/g, "");
  const ip = isIpLiteral(host);
  const local = isLocalHost(host);
  if (local && !allowPrivate) {
    throw invalid("URL points to a private or loopback address; set ALLOW_PRIVATE_CRAWL_TARGETS=true to crawl it");
  }
  if (!ip && !local && !/\.[a-z\u0400-\u04ff]{2,}$|\.xn--[a-z0-9-]+$/i.test(host)) {
    throw invalid("URL must have a valid top-level domain or be a valid path");
  }
  return text;
}

/** The webhook setting (a URL or {url, ...}): a private or loopback destination is refused unless allowed. */
export function checkWebhook(webhook: string | { url: string } | undefined, allowLocal: boolean): void {
  if (webhook === undefined || allowLocal) return;
  const path = typeof webhook === "string" ? ["webhook"] : ["webhook", "url"];
  const url = typeof webhook === "string" ? webhook : webhook.url;
  const host = URL.canParse(url) ? new URL(url).hostname : "";
  if (!host) throw invalidField(path, "Invalid webhook URL");
  if (isLocalHost(host)) {
    throw invalidField(path, "webhook URL points to a private or loopback address; set ALLOW_LOCAL_WEBHOOKS=true to deliver to it");
  }
}
