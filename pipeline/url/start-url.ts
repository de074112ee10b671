// Validation of a crawl's or a scrape's start URL (the anchor's rules, with private targets governed by one setting).
import { isIP } from "node:net";
import { isPrivateAddress } from "../net/private-address.ts";
import { invalidField } from "../runtime/errors.ts";

const invalid = (message: string) => invalidField(["url"], message);

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
  const ip = isIP(host) !== 0;
  const local = host === "localhost" || host.endsWith(".localhost") || (ip && isPrivateAddress(host));
  if (local && !allowPrivate) {
    throw invalid("URL points to a private or loopback address; set ALLOW_PRIVATE_CRAWL_TARGETS=true to crawl it");
  }
  if (!ip && !local && !/\.[a-z\u0400-\u04ff]{2,}$|\.xn--[a-z0-9-]+$/i.test(host)) {
    throw invalid("URL must have a valid top-level domain or be a valid path");
  }
  return text;
}
