// Web archives copied to an S3-compatible bucket (WARC_S3_URL), in both modes, against the real SeaweedFS that
// scripts/seaweedfs.sh runs: a crawl of a local site with `warc: true` and small WARC files (so that several are
// rolled while it runs) ends with every WARC file the API lists in the bucket under <prefix>/<job id>/<name>, byte for
// byte (SHA-256), and the job's index as index.cdxj, the same text GET …/cdxj serves; the listing names each file's
// copy. With the bucket unreachable (its address has no listener) nothing is copied, a restart of Trawl changes
// nothing to that, and once the address answers the copies are made from the files kept on disk, none missing.
import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";
import { newBucket, objects, s3Client, s3Config, S3_PORT } from "./s3-server.ts";

const client = s3Client();
afterAll(() => client.destroy());

/** Small files: the 63-page site fills several, rolled while the crawl runs. */
const FILE_BYTES = 40_000;

async function crawl(trawl: Instance, site: FixtureSite): Promise<string> {
  const started = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 100, warc: true });
  expect(started.status).toBe(200);
  expect((await waitForEnd(trawl.api, started.body.id, 120_000)).at(-1).status).toBe("completed");
  return started.body.id as string;
}

/** Waits until the bucket holds the job's index (the last object copied), then returns what it holds. */
async function copied(bucket: string, prefix: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const held = await objects(client, bucket, prefix);
    if (held.has("index.cdxj") || Date.now() > deadline) return held;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The API's files and index of the job match the bucket's objects byte for byte. */
async function expectSame(trawl: Instance, id: string, bucket: string, prefix: string, held: Awaited<ReturnType<typeof copied>>) {
  const listing = await getJson(`${trawl.api}/v2/crawl/${id}/warc`);
  const files = listing.body.files as { name: string; sha256: string; bytes: number; s3?: string }[];
  expect(files.length).toBeGreaterThan(2); // rolled at FILE_BYTES
  expect([...held.keys()].sort()).toEqual([...files.map((f) => f.name), "index.cdxj"].sort());
  for (const f of files) {
    expect(held.get(f.name)?.sha256, f.name).toBe(f.sha256);
    expect(f.s3).toBe(`s3://${bucket}/${prefix}${f.name}`);
  }
  const index = await (await fetch(`${trawl.api}/v2/crawl/${id}/cdxj`)).text();
  expect(index.split("\n").length).toBeGreaterThan(60);
  expect(held.get("index.cdxj")?.bytes.toString()).toBe(index);
}

describe.each(MODES)("%s mode", (mode) => {
  let site: FixtureSite;
  beforeAll(async () => {
    site = await startFixtureSite();
  });
  afterAll(() => site?.close());

  it("every closed WARC file and the job's CDXJ index are copied to the bucket, byte for byte", async () => {
    const bucket = await newBucket(client);
    const trawl = await startTrawl({ mode, warcMaxFileBytes: FILE_BYTES, warcIdleCloseMs: 1000, ...s3Config(bucket, "archives/crawls") });
    try {
      const id = await crawl(trawl, site);
      const prefix = `archives/crawls/${id}/`;
      const held = await copied(bucket, prefix, 60_000);
      await expectSame(trawl, id, bucket, prefix, held);
    } finally {
      await trawl.stop();
    }
  });

  it("an unreachable bucket: nothing is lost, across a restart; the copies are made once it answers", async () => {
    const bucket = await newBucket(client);
    // the bucket's address: a port with no listener until the proxy below opens it
    const port = await freePort();
    const trawl0 = await startTrawl({ mode, warcMaxFileBytes: FILE_BYTES, warcIdleCloseMs: 1000, ...s3Config(bucket, "a", `http://127.0.0.1:${port}`) });
    let trawl = trawl0;
    let proxy: Server | undefined;
    try {
      const id = await crawl(trawl, site);
      const prefix = `a/${id}/`;
      await new Promise((r) => setTimeout(r, 8000)); // files closed (1 s idle), attempts failed
      expect((await objects(client, bucket, prefix)).size).toBe(0);
      const listed = (await getJson(`${trawl.api}/v2/crawl/${id}/warc`)).body.files as { s3?: string }[];
      expect(listed.length).toBeGreaterThan(2);
      expect(listed.filter((f) => f.s3)).toEqual([]);
      trawl = await trawl.restart(); // still unreachable: the new process finds the copies to make on disk
      await new Promise((r) => setTimeout(r, 3000));
      expect((await objects(client, bucket, prefix)).size).toBe(0);
      proxy = await forward(port, S3_PORT);
      const held = await copied(bucket, prefix, 90_000);
      await expectSame(trawl, id, bucket, prefix, held);
    } finally {
      await trawl.stop();
      await new Promise((r) => (proxy ? proxy.close(r) : r(undefined)));
    }
  });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** A TCP forwarder from 127.0.0.1:`from` to 127.0.0.1:`to`. */
async function forward(from: number, to: number): Promise<Server> {
  const sockets = new Set<Socket>();
  const server = createServer((down) => {
    const up = connect(to, "127.0.0.1");
    for (const s of [down, up]) {
      sockets.add(s);
      s.on("error", () => s.destroy());
      s.on("close", () => sockets.delete(s));
    }
    down.pipe(up).pipe(down);
  });
  const close = server.close.bind(server);
  server.close = (cb) => {
    for (const s of sockets) s.destroy();
    return close(cb);
  };
  await new Promise<void>((r) => server.listen(from, "127.0.0.1", r));
  return server;
}
