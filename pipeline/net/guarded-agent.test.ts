// The guarded agent against a real loopback server: IP literals (which never reach a lookup) are refused at connect.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "undici";
import { guardedAgent, PRIVATE_ADDRESS_REFUSED } from "./guarded-agent.ts";

let server: Server;
let port = 0;
let hits = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++;
    res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const LITERALS = ["127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:1]"];

describe("guardedAgent", () => {
  it("refuses private IP literals in every spelling at connect time, for GET and POST", async () => {
    const agent = guardedAgent({ allowPrivate: false });
    for (const host of LITERALS) {
      for (const method of ["GET", "POST"] as const) {
        const err = await request(`http://${host}:${port}/`, { dispatcher: agent, method, body: method === "POST" ? "{}" : null }).then(
          () => null,
          (e: { code?: string; cause?: { code?: string } }) => e,
        );
        expect(err?.code ?? err?.cause?.code, `${method} ${host}`).toBe(PRIVATE_ADDRESS_REFUSED);
      }
    }
    expect(hits).toBe(0);
    await agent.close();
  });

  it("connects to them when private addresses are allowed, and resolves names through RESOLVE", async () => {
    const agent = guardedAgent({ allowPrivate: true, resolve: { "mapped.test": "::ffff:127.0.0.1" } });
    for (const host of [...LITERALS, "mapped.test"]) {
      const res = await request(`http://${host}:${port}/`, { dispatcher: agent });
      expect(await res.body.text(), host).toBe("ok");
    }
    await agent.close();
    const strict = guardedAgent({ allowPrivate: false, resolve: { "mapped.test": "::ffff:7f00:1" } });
    const err = await request(`http://mapped.test:${port}/`, { dispatcher: strict }).then(() => null, (e: { code?: string }) => e);
    expect(err?.code).toBe(PRIVATE_ADDRESS_REFUSED);
    await strict.close();
  });
});
