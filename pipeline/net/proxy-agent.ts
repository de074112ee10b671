// The outbound proxy (PROXY_SERVER) as an undici dispatcher, shared by the static fetcher and the browser's requests,
// and as a tunnel maker for the browser's own connections (https and WebSockets it opens through Trawl's guard).
import type { Duplex } from "node:stream";
import { Client, type Dispatcher, ProxyAgent } from "undici";

export interface ProxySetting {
  uri: string;
  username?: string;
  password?: string;
}

function authorization(proxy: ProxySetting): string | undefined {
  return proxy.username !== undefined ? `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ""}`).toString("base64")}` : undefined;
}

/**
 * CONNECT tunnels for https, absolute-form requests (`GET http://host/path`) for http, as browsers send them: common
 * proxies refuse `CONNECT host:80` by default (undici tunnels http too unless told not to). Basic credentials when a
 * user is set.
 */
export function proxyAgent(proxy: ProxySetting, opts: { rejectUnauthorized: boolean; connections: number }): Dispatcher {
  const token = authorization(proxy);
  return new ProxyAgent({
    uri: proxy.uri,
    proxyTunnel: false,
    ...(token ? { token } : {}),
    requestTls: { rejectUnauthorized: opts.rejectUnauthorized },
    keepAliveTimeout: 10000,
    connections: opts.connections,
  });
}

/** A raw tunnel to `host:port` through the proxy (CONNECT), or the proxy's refusal as an error. */
export async function proxyTunnel(proxy: ProxySetting, host: string, port: number, signal?: AbortSignal): Promise<Duplex> {
  const client = new Client(new URL(proxy.uri).origin);
  const token = authorization(proxy);
  try {
    const { socket, statusCode } = await client.connect({ path: `${host}:${port}`, headers: token ? { "proxy-authorization": token } : {}, ...(signal ? { signal } : {}) });
    if (statusCode !== 200) {
      socket.destroy();
      throw new Error(`the proxy answered ${statusCode} to CONNECT ${host}:${port}`);
    }
    // the client only made this one tunnel: it goes when the tunnel ends
    socket.once("close", () => void client.destroy().catch(() => undefined));
    return socket;
  } catch (err) {
    await client.destroy().catch(() => undefined);
    throw err;
  }
}
