// The API's listening sockets. libuv (since 1.45, libuv/libuv#3696) accepts ONE connection per event-loop turn: in a
// process whose loop is busy with crawl work (embedded mode, or every role in one process) a burst of new connections
// waits one turn each, which was most of the tail of GET /v2/crawl/:id under 200 readers (bench/README.md, "Third
// session"). With API_ACCEPT_SOCKETS > 1 the port gets that many listening sockets with SO_REUSEPORT (Linux): the
// kernel spreads new connections over them and each accepts one per turn. Every socket hands its connections to the
// one HTTP server, so keep-alive, upgrades (WebSocket), timeouts and shutdown are the server's as with one socket.
// Before that, the port is bound once without SO_REUSEPORT: if anything listens there already (another Trawl too,
// whose sockets have SO_REUSEPORT) start fails with EADDRINUSE instead of silently sharing the port.
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from "node:net";
import type { Server } from "node:http";

function listenOnce(server: NetServer, opts: { port: number; host: string; reusePort?: boolean }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

const closeServer = (s: NetServer) => new Promise<void>((resolve) => s.close(() => resolve()));

/**
 * Listens on host:port with `sockets` listening sockets feeding `server` (1: the server's own socket, as usual).
 * Returns a function that closes the extra sockets (server.close() closes the server's own).
 */
export async function listenApi(server: Server, opts: { port: number; host: string; sockets: number }): Promise<() => Promise<void>> {
  if (opts.sockets <= 1) {
    await listenOnce(server, { port: opts.port, host: opts.host });
    return async () => undefined;
  }
  // the port must be free: a plain bind fails if any socket (SO_REUSEPORT or not) listens there
  const probe = createNetServer();
  await listenOnce(probe, { port: opts.port, host: opts.host });
  const port = (probe.address() as AddressInfo).port;
  await closeServer(probe);
  await listenOnce(server, { port, host: opts.host, reusePort: true });
  const extra: NetServer[] = [];
  try {
    for (let i = 1; i < opts.sockets; i++) {
      const s = createNetServer((socket) => server.emit("connection", socket));
      await listenOnce(s, { port, host: opts.host, reusePort: true });
      extra.push(s);
    }
  } catch (err) {
    await Promise.all(extra.map(closeServer));
    await closeServer(server);
    throw err;
  }
  return async () => {
    await Promise.all(extra.map(closeServer));
  };
}
