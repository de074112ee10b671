import { describe, expect, it } from "vitest";
import { billedLedger, CreditReservations, UNLIMITED, withCreditCap } from "./credit-reservations.ts";

describe("CreditReservations", () => {
  it("bills at most the grant and the hold plus what is left, and drops the hold on every path", async () => {
    const r = new CreditReservations();
    let left = 0; // what the team has left besides this process's holds
    const a = r.hold("t", 5, 1, async () => left);
    const b = r.hold("t", 5, 2, async () => left);
    expect(r.heldBy("t")).toBe(3);
    const rows: number[] = [];
    expect(await a.settle(4, async (n) => void rows.push(n))).toBe(1); // only its hold: nothing else is left
    expect(r.heldBy("t")).toBe(2);
    await expect(b.settle(1, async () => { throw new Error("ledger down"); })).rejects.toThrow("ledger down");
    expect(r.total()).toBe(0);
    left = 10;
    const c = r.hold("t", 3, 1, async () => left);
    expect(await c.settle(7, async (n) => void rows.push(n))).toBe(3); // never more than granted
    c.release();
    r.hold("t", 2, 2, async () => left).release();
    expect(rows).toEqual([1, 3]);
    expect(r.total()).toBe(0);
  });

  it("runs a team's admissions and settlements one at a time, in order; other teams are not held up", async () => {
    const r = new CreditReservations();
    const order: string[] = [];
    let open!: () => void;
    const first = r.exclusive("t", () => new Promise<void>((resolve) => { open = resolve; }).then(() => void order.push("t1")));
    const failing = r.exclusive("t", async () => { order.push("t2"); throw new Error("refused"); });
    const third = r.exclusive("t", async () => void order.push("t3"));
    await r.exclusive("u", async () => void order.push("u1"));
    open();
    await first;
    await expect(failing).rejects.toThrow("refused");
    await third;
    expect(order).toEqual(["u1", "t1", "t2", "t3"]);
  });

  it("caps PDF pages at the credits, except for an unlimited job or PDFs returned as base64", () => {
    const options: { formats: string[]; pdf?: { parse: boolean; creditPages?: number } } = { formats: [] };
    expect(withCreditCap(options, 3)).toEqual({ formats: [], pdf: { parse: true, creditPages: 3 } });
    expect(withCreditCap({ pdf: { parse: true, maxPages: 10 } }, 3)).toEqual({ pdf: { parse: true, maxPages: 10, creditPages: 3 } });
    expect(withCreditCap({ pdf: { parse: false } }, 3)).toEqual({ pdf: { parse: false } });
    expect(withCreditCap({}, Infinity)).toEqual({});
  });

  it("bills a use case's own ledger rows through the reservation", async () => {
    const r = new CreditReservations();
    const written: number[] = [];
    const ledger = { recordUsage: async (rows: { credits: number }[]) => void written.push(...rows.map((x) => x.credits)) };
    await billedLedger(r.hold("t", 2, 1, async () => 1), ledger)?.recordUsage([{ teamId: "t", jobId: "j", credits: 12, at: 0 }]);
    expect(written).toEqual([2]);
    const heard: number[] = [];
    await billedLedger(r.hold("t", 5, 1, async () => 0), ledger, (n) => heard.push(n))?.recordUsage([{ teamId: "t", jobId: "k", credits: 3, at: 0 }]);
    expect(heard).toEqual([1]);
    expect(r.total()).toBe(0);
    expect(billedLedger(UNLIMITED, ledger)).toBe(ledger);
  });
});
