// Ports built from the configuration that several roles (and the CLI) share.
import { UndiciFetcher } from "../pipeline/fetch-render/fetcher.ts";
import { guardedAgent } from "../pipeline/net/guarded-agent.ts";
import type { Config } from "../pipeline/runtime/config.ts";

/** The page fetcher as the configuration describes it (fetch-render, the scrape route and the CLI share it). */
export function pageFetcher(config: Config): UndiciFetcher {
  const proxy = config.proxyServer
    ? { uri: config.proxyServer, ...(config.proxyUsername ? { username: config.proxyUsername, password: config.proxyPassword } : {}) }
    : undefined;
  return new UndiciFetcher({
    userAgent: config.userAgent, maxBytes: config.fetchMaxBytes, maxRedirects: config.fetchMaxRedirects,
    allowPrivate: config.allowPrivateCrawlTargets, resolve: config.resolve, ...(proxy ? { proxy } : {}),
  });
}

/** The agent webhooks are delivered through: private destinations refused at connect time unless allowed. */
export function webhookAgent(config: Config) {
  return guardedAgent({ allowPrivate: config.allowLocalWebhooks, resolve: config.resolve, connections: 16 });
}
