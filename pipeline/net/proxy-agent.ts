// The outbound proxy (PROXY_SERVER) as an undici dispatcher, shared by the static fetcher and the browser's requests.
import { type Dispatcher, ProxyAgent } from "undici";

export interface ProxySetting {
  uri: string;
  username?: string;
  password?: string;
}

/** CONNECT tunnels for https, absolute-form requests for http; Basic credentials when a user is set. */
export function proxyAgent(proxy: ProxySetting, opts: { rejectUnauthorized: boolean; connections: number }): Dispatcher {
  return new ProxyAgent({
    uri: proxy.uri,
    ...(proxy.username !== undefined ? { token: `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ""}`).toString("base64")}` } : {}),
    requestTls: { rejectUnauthorized: opts.rejectUnauthorized },
    keepAliveTimeout: 10000,
    connections: opts.connections,
  });
}
