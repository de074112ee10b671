import { describe, expect, it } from "vitest";
import { GroupSender } from "./group-send.ts";

/** A server whose requests complete only when the test says so. */
function server() {
  const requests: { items: string[]; done: () => void; fail: (e: Error) => void }[] = [];
  const send = (items: string[]) => new Promise<void>((done, fail) => requests.push({ items, done, fail }));
  return { requests, send };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("GroupSender", () => {
  it("sends the first call at once and the calls made while it is in flight together, in call order", async () => {
    const s = server();
    const g = new GroupSender(s.send, (x) => x.length, 1000);
    const settled: string[] = [];
    const a = g.submit(["a1", "a2"]).then(() => settled.push("a"));
    const b = g.submit(["b"]).then(() => settled.push("b"));
    const c = g.submit(["c1", "c2"]).then(() => settled.push("c"));
    expect(s.requests.map((r) => r.items)).toEqual([["a1", "a2"]]);
    s.requests[0]?.done();
    await a;
    await tick();
    expect(settled).toEqual(["a"]); // b and c resolve with their own request, not with a's
    expect(s.requests.map((r) => r.items)).toEqual([["a1", "a2"], ["b", "c1", "c2"]]);
    s.requests[1]?.done();
    await Promise.all([b, c]);
    expect(settled).toEqual(["a", "b", "c"]);
    expect(g.stats).toEqual({ requests: 2, calls: 3 });
  });

  it("keeps a request under the byte budget without splitting a call (one call over it goes alone)", async () => {
    const s = server();
    const g = new GroupSender(s.send, (x) => x.length, 10);
    const calls = [g.submit(["xxxxxxxxxxxxxxxxxxxx"]), g.submit(["aaaa"]), g.submit(["bbbb"]), g.submit(["cccc"]), g.submit(["dddddddddddddddd"])];
    for (let i = 0; i < 4; i++) {
      s.requests[i]?.done();
      await tick();
      await tick();
    }
    expect(s.requests.map((r) => r.items)).toEqual([["xxxxxxxxxxxxxxxxxxxx"], ["aaaa", "bbbb"], ["cccc"], ["dddddddddddddddd"]]);
    await Promise.all(calls);
  });

  it("a failed request rejects every call it carried with its error; the queue goes on", async () => {
    const s = server();
    const g = new GroupSender(s.send, () => 1, 100);
    const a = g.submit(["a"]);
    const b = g.submit(["b"]);
    const c = g.submit(["c"]);
    s.requests[0]?.done();
    await a;
    await tick();
    s.requests[1]?.fail(new Error("broker gone"));
    await expect(b).rejects.toThrow("broker gone");
    await expect(c).rejects.toThrow("broker gone");
    const d = g.submit(["d"]);
    await tick();
    expect(s.requests.at(-1)?.items).toEqual(["d"]);
    s.requests.at(-1)?.done();
    await d;
  });

  it("a send that throws synchronously rejects its calls and does not stall the queue", async () => {
    let calls = 0;
    const g = new GroupSender<string>(() => {
      if (calls++ === 0) throw new Error("sync");
      return Promise.resolve();
    }, () => 1, 100);
    await expect(g.submit(["a"])).rejects.toThrow("sync");
    await g.submit(["b"]);
  });
});

/**
 * A sender that retries refused calls alone, whose first request stays in flight until `release()` (so the calls made
 * meanwhile form one group), and whose later requests fail with `fail(items)`'s error when it returns one.
 */
function heldFirst(fail: (items: string[]) => string | undefined) {
  const sent: string[][] = [];
  let release: () => void = () => undefined;
  const first = new Promise<void>((r) => (release = r));
  const g = new GroupSender<string>(async (items) => {
    sent.push(items);
    if (sent.length === 1) return first;
    const error = fail(items);
    if (error) throw new Error(error);
  }, () => 1, 100, 0, (err) => (err as Error).message === "refused");
  return { g, sent, release: () => release() };
}

describe("GroupSender sending alone on failure", () => {
  it("a failed request of several calls is tried once per call: only the call the server refuses fails", async () => {
    const { g, sent, release } = heldFirst((items) => (items.includes("bad") ? "refused" : undefined));
    const a = g.submit(["a"]);
    const b = g.submit(["b1", "b2"]);
    const bad = g.submit(["bad"]);
    const c = g.submit(["c"]);
    release();
    await a;
    await expect(bad).rejects.toThrow("refused");
    await Promise.all([b, c]);
    expect(sent).toEqual([["a"], ["b1", "b2", "bad", "c"], ["b1", "b2"], ["bad"], ["c"]]);
  });

  it("a call alone that fails is not sent again", async () => {
    let calls = 0;
    const g = new GroupSender<string>(async () => {
      calls++;
      throw new Error("refused");
    }, () => 1, 100, 0, () => true);
    await expect(g.submit(["a"])).rejects.toThrow("refused");
    expect(calls).toBe(1);
  });

  it("an error it does not accept (the server is away) fails every call of the group without sending them again", async () => {
    const { g, sent, release } = heldFirst(() => "down");
    const a = g.submit(["a"]);
    const b = g.submit(["b"]);
    const c = g.submit(["c"]);
    release();
    await a;
    await expect(b).rejects.toThrow("down");
    await expect(c).rejects.toThrow("down");
    expect(sent).toEqual([["a"], ["b", "c"]]);
  });
});

describe("GroupSender with a linger", () => {
  it("an idle sender waits the linger for company; a full request goes at once", async () => {
    const s = server();
    const g = new GroupSender(s.send, (x) => x.length, 6, 30);
    const a = g.submit(["aa"]);
    const b = g.submit(["bb"]);
    await tick();
    expect(s.requests).toHaveLength(0); // lingering
    await new Promise((r) => setTimeout(r, 50));
    expect(s.requests.map((r) => r.items)).toEqual([["aa", "bb"]]);
    s.requests[0]?.done();
    await Promise.all([a, b]);
    const c = g.submit(["ccc"]);
    const d = g.submit(["ddd"]); // 6 bytes: the budget is reached, no need to wait
    await tick();
    expect(s.requests.map((r) => r.items).at(-1)).toEqual(["ccc", "ddd"]);
    s.requests.at(-1)?.done();
    await Promise.all([c, d]);
  });
});
