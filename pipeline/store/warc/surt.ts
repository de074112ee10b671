// SURT keys (Sort-friendly URI Reordering Transform) as pywb and Common Crawl's CDXJ use them:
// `http://www.Example.com:80/a?b=1&a=2` -> `com,example)/a?a=2&b=1`. Pure.

export function surt(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url.toLowerCase();
  }
  let host = u.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host.startsWith("www.")) host = host.slice(4);
  const isIp = /^[\d.]+$/.test(host) || host.includes(":");
  const reversed = isIp ? host : host.split(".").reverse().join(",");
  const defaultPort = (u.protocol === "http:" && u.port === "80") || (u.protocol === "https:" && u.port === "443") || u.port === "";
  const port = defaultPort ? "" : `:${u.port}`;
  const query = u.search.length > 1 ? `?${u.search.slice(1).split("&").sort().join("&")}` : "";
  return `${reversed}${port})${u.pathname.toLowerCase()}${query.toLowerCase()}`;
}

/** CDX timestamp: 14 digits, UTC. */
export const cdxTimestamp = (ms: number): string => new Date(ms).toISOString().replace(/[-:T]/g, "").slice(0, 14);
