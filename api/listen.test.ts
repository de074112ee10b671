import { createServer, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { listenApi } from "./listen.ts";

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function api(port: number, sockets: number): Promise<Server> {
  const server = createServer((req, res) => res.end(`ok ${req.url}`));
  const closeListeners = await listenApi(server, { port, host: "127.0.0.1", sockets });
  open.push(async () => {
    await closeListeners();
    await new Promise((r) => server.close(r));
    server.closeAllConnections();
  });
  return server;
}

const portOf = (s: { address(): unknown }) => (s.address() as AddressInfo).port;

describe.skipIf(process.platform !== "linux")("listenApi with several accepting sockets", () => {
  it("serves every connection through the one server, whichever socket the kernel gave it to", async () => {
    const server = await api(0, 8);
    const seen = new Set<unknown>();
    server.on("connection", (s) => seen.add(s));
    const port = portOf(server);
    // 64 fresh connections: with 8 sockets the kernel spreads them, every answer still comes from the server
    const answers = await Promise.all(Array.from({ length: 64 }, (_, i) => fetch(`http://127.0.0.1:${port}/${i}`, { headers: { connection: "close" } }).then((r) => r.text())));
    expect(answers).toEqual(Array.from({ length: 64 }, (_, i) => `ok /${i}`));
    expect(seen.size).toBe(64);
  });

  it("refuses a port something already listens on, even another process's SO_REUSEPORT sockets", async () => {
    const first = await api(0, 4);
    const port = portOf(first);
    await expect(api(port, 4)).rejects.toMatchObject({ code: "EADDRINUSE" });
    await expect(api(port, 1)).rejects.toMatchObject({ code: "EADDRINUSE" });
    const plain = createNetServer();
    await new Promise<void>((r) => plain.listen(0, "127.0.0.1", r));
    open.push(() => new Promise((r) => plain.close(() => r())));
    await expect(api(portOf(plain), 4)).rejects.toMatchObject({ code: "EADDRINUSE" });
  });

  it("frees the port once the server and its extra sockets are closed", async () => {
    const server = await api(0, 4);
    const port = portOf(server);
    for (const close of open.splice(0)) await close();
    const again = await api(port, 1);
    expect(portOf(again)).toBe(port);
  });
});
