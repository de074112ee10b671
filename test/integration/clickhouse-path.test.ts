// A ClickHouse reached through a proxy under a path prefix (https://gateway.example/clickhouse, as API gateways and
// Kubernetes ingresses expose it): every request goes to that path. The client used to drop the path and send the
// requests to the proxy's root. A plain HTTP proxy in this process forwards /clickhouse/... to the real server.
import { createServer, request, type Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw } from "../../pipeline/store/sql.ts";

const config = loadConfig(process.env);
const target = new URL(config.clickhouseUrl.split(",")[0] as string);
const PREFIX = "/clickhouse";
let proxy: Server;
const paths: string[] = [];

beforeAll(async () => {
  proxy = createServer((req, res) => {
    paths.push((req.url ?? "").split("?")[0] as string);
    if (!req.url?.startsWith(`${PREFIX}/`) && req.url?.split("?")[0] !== PREFIX) {
      res.writeHead(404).end("not under the prefix");
      return;
    }
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url.slice(PREFIX.length) || "/", headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on("error", (err) => res.writeHead(502).end(err.message));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
});

afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

it("sends queries, statements and INSERTs to the path of CLICKHOUSE_URL", async () => {
  const { port } = proxy.address() as AddressInfo;
  const database = `trawl_x${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const ch = new ClickHouseClient({ url: `http://127.0.0.1:${port}${PREFIX}/`, user: config.clickhouseUser, password: config.clickhousePassword, database });
  try {
    await ch.exec(raw(`CREATE DATABASE IF NOT EXISTS ${database}`));
    await ch.exec(raw(`CREATE TABLE ${database}.t (k String, n UInt32) ENGINE = MergeTree ORDER BY k`));
    await ch.insert("t", ["k", "n"], [["a", 1], ["b", 2]]);
    expect(await ch.query<{ k: string; n: number }>(raw(`SELECT k, n FROM ${database}.t ORDER BY k`))).toEqual([{ k: "a", n: 1 }, { k: "b", n: 2 }]);
    expect(paths.length).toBeGreaterThanOrEqual(4);
    expect(paths.filter((p) => !p.startsWith(PREFIX))).toEqual([]);
  } finally {
    await ch.exec(raw(`DROP DATABASE IF EXISTS ${database}`));
  }
});

it("a read of every replica does not wait for one that hangs: it counts as away a few seconds after another answered", async () => {
  // a host that takes the connection and never answers (packets dropped, a frozen VM): no refusal to fail over on
  const hung = createTcpServer(() => undefined);
  await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
  const { port } = hung.address() as AddressInfo;
  try {
    const ch = new ClickHouseClient({ url: `${config.clickhouseUrl.split(",")[0]},http://127.0.0.1:${port}`, user: config.clickhouseUser, password: config.clickhousePassword, database: "system" });
    const started = Date.now();
    expect(await ch.queryEvery<{ one: number }>(raw("SELECT 1 AS one"))).toEqual([[{ one: 1 }]]);
    expect(Date.now() - started).toBeLessThan(10_000);
  } finally {
    hung.close();
  }
}, 60_000);

it("a request to a server that takes the connection and never answers fails as away after CLICKHOUSE_REQUEST_TIMEOUT_MS, and goes to the next replica", async () => {
  const hung = createTcpServer(() => undefined);
  await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
  const { port } = hung.address() as AddressInfo;
  const real = config.clickhouseUrl.split(",")[0] as string;
  const opts = { user: config.clickhouseUser, password: config.clickhousePassword, database: "system", requestTimeoutMs: 1500 };
  const database = `trawl_x${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  try {
    // alone: the caller gets the "away" error (which the stages retry) instead of waiting forever
    const alone = new ClickHouseClient({ ...opts, url: `http://127.0.0.1:${port}` });
    let started = Date.now();
    const err = await alone.query(raw("SELECT 1 AS one")).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(Date.now() - started).toBeLessThan(10_000);
    // first in the list: a query and an INSERT are answered by the next server, which becomes current (statements
    // wait 180 s more, for ON CLUSTER: not timed here)
    const both = new ClickHouseClient({ ...opts, url: `http://127.0.0.1:${port},${real}` });
    started = Date.now();
    expect(await both.query<{ one: number }>(raw("SELECT 1 AS one"))).toEqual([{ one: 1 }]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(both.failovers.count).toBe(1);
    expect(both.currentUrl).toBe(real.replace(/\/+$/, ""));
    await new ClickHouseClient({ ...opts, url: real, database: "default" }).exec(raw(`CREATE DATABASE IF NOT EXISTS ${database}`));
    await new ClickHouseClient({ ...opts, url: real, database }).exec(raw(`CREATE TABLE ${database}.t (k String) ENGINE = MergeTree ORDER BY k`));
    const writer = new ClickHouseClient({ ...opts, url: `http://127.0.0.1:${port},${real}`, database });
    await writer.insert("t", ["k"], [["a"], ["b"]]);
    expect(writer.failovers.count).toBe(1);
    expect(await writer.query<{ k: string }>(raw(`SELECT k FROM ${database}.t ORDER BY k`))).toEqual([{ k: "a" }, { k: "b" }]);
  } finally {
    hung.close();
    await new ClickHouseClient({ ...opts, url: real, database: "default" }).exec(raw(`DROP DATABASE IF EXISTS ${database}`));
  }
}, 60_000);
