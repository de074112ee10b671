// Ports built from the configuration that several roles (and the CLI) share.
import { UndiciFetcher } from "../pipeline/fetch-render/fetcher.ts";
import { guardedAgent } from "../pipeline/net/guarded-agent.ts";
import type { Config } from "../pipeline/runtime/config.ts";
import type { Logger } from "../pipeline/runtime/logger.ts";
import type { Metrics } from "../pipeline/runtime/metrics.ts";
import { ChromiumRenderer } from "../pipeline/browser/chromium-renderer.ts";
import { loadAdHosts, type AdHosts } from "../pipeline/browser/ad-hosts.ts";

/** PROXY_SERVER and its credentials, when set. */
const proxyOf = (config: Config) => config.proxyServer
  ? { uri: config.proxyServer, ...(config.proxyUsername ? { username: config.proxyUsername, password: config.proxyPassword } : {}) }
  : undefined;

/** The page fetcher as the configuration describes it (fetch-render, the scrape route and the CLI share it). */
export function pageFetcher(config: Config): UndiciFetcher {
  const proxy = proxyOf(config);
  return new UndiciFetcher({
    userAgent: config.userAgent, maxBytes: config.fetchMaxBytes, maxRedirects: config.fetchMaxRedirects,
    allowPrivate: config.allowPrivateCrawlTargets, resolve: config.resolve, ...(proxy ? { proxy } : {}),
  });
}

/** The agent webhooks are delivered through: private destinations refused at connect time unless allowed. */
export function webhookAgent(config: Config) {
  return guardedAgent({ allowPrivate: config.allowLocalWebhooks, resolve: config.resolve, connections: 16 });
}

/** blockAds: the hosts of BLOCK_ADS_LISTS (a missing list is said once, at start). */
function adHosts(config: Config, log: Logger): AdHosts | undefined {
  const paths = config.blockAdsLists.split(",").map((p) => p.trim()).filter(Boolean);
  if (!paths.length) return undefined;
  const { hosts, missing } = loadAdHosts(paths);
  if (missing.length) log.warn({ missing }, "blockAds: filter list not found (install Debian's webext-ublock-origin-chromium, or set BLOCK_ADS_LISTS)");
  log.info({ hosts: hosts.size, lists: paths.length - missing.length }, "blockAds: ad and tracker hosts loaded");
  return hosts;
}

/** Headless Chromium as the configuration describes it (the render role and POST /v2/scrape share one per process). */
export function pageRenderer(config: Config, log: Logger, metrics?: Metrics): ChromiumRenderer {
  const proxy = proxyOf(config);
  const ads = adHosts(config, log);
  return new ChromiumRenderer({
    executablePath: config.chromiumPath, concurrency: config.renderConcurrency, allowPrivate: config.allowPrivateCrawlTargets,
    resolve: config.resolve, maxBytes: config.fetchMaxBytes, userAgent: config.userAgent, log, ...(proxy ? { proxy } : {}), ...(ads ? { adHosts: ads } : {}), ...(metrics ? { metrics } : {}),
  });
}
