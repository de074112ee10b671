// POST /v2/parse on a real HTTP server: an upload whose body trickles in is refused once PARSE_READ_TIMEOUT_MS has
// passed and its upload slot is given back (two clients sending a byte a second held both PARSE_MAX_CONCURRENT slots
// for the server's whole request timeout, and every other upload got 503 PARSE_BUSY).
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../pipeline/runtime/config.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";
import { createApp } from "./app.ts";

let server: Server;
let port = 0;
const READ_TIMEOUT_MS = 1500;

beforeAll(async () => {
  const app = createApp({
    config: loadConfig({ PARSE_READ_TIMEOUT_MS: String(READ_TIMEOUT_MS), PARSE_MAX_CONCURRENT: "1" }),
    log: createLogger("silent"), clock: { now: () => Date.now() }, ready: async () => true,
    // the trickling upload never reaches a converter; the one sent after it is refused (an empty file) before one
    store: {} as never, bus: {} as never, fetcher: {} as never, convert: {} as never, robots: {} as never, searchBackend: {} as never,
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const BOUNDARY = "trawlboundary";

/** A multipart upload that announces 1 MB and sends its first bytes, then one byte every 200 ms: what it was answered. */
function trickle(): { answer: Promise<string>; socket: Socket } {
  const socket = connect(port, "127.0.0.1");
  let received = "";
  const answer = new Promise<string>((resolve) => {
    socket.on("data", (d) => void (received += d.toString("latin1")));
    socket.on("close", () => resolve(received));
    socket.on("error", () => undefined);
  });
  socket.write(`POST /v2/parse HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 1048576\r\n\r\n`);
  socket.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.html"\r\nContent-Type: text/html\r\n\r\n`);
  const timer = setInterval(() => socket.writable && socket.write("x"), 200);
  socket.on("close", () => clearInterval(timer));
  return { answer, socket };
}

async function emptyUpload(): Promise<{ status: number; code?: string }> {
  const form = new FormData();
  form.append("file", new Blob([], { type: "text/html" }), "empty.html");
  const res = await fetch(`http://127.0.0.1:${port}/v2/parse`, { method: "POST", body: form });
  return { status: res.status, code: ((await res.json()) as { code?: string }).code };
}

describe("POST /v2/parse read deadline", () => {
  it("refuses an upload not received whole within PARSE_READ_TIMEOUT_MS and gives its slot back", async () => {
    const slow = trickle();
    await new Promise((r) => setTimeout(r, 300));
    // the one slot is held by the trickling upload
    expect(await emptyUpload()).toMatchObject({ status: 503, code: "PARSE_BUSY" });
    const started = Date.now();
    await slow.answer; // the server closed the connection
    expect(Date.now() - started).toBeLessThan(30_000); // not the server's request timeout (300 s)
    // the slot is free again: the next upload reaches the route (an empty file: 400, not 503)
    expect(await emptyUpload()).toMatchObject({ status: 400 });
    slow.socket.destroy();
  }, 60_000);
});
