import { describe, expect, it } from "vitest";
import { endpointOf, EndpointSlots } from "./endpoints.ts";

describe("endpointOf", () => {
  it("is scheme + host + port, whatever the path, query, credentials or default port", () => {
    expect(endpointOf("https://Hooks.Example.com/a/b?c=1#d")).toBe("https://hooks.example.com");
    expect(endpointOf("https://hooks.example.com:443/x")).toBe("https://hooks.example.com");
    expect(endpointOf("http://u:p@127.0.0.1:8080/x")).toBe("http://127.0.0.1:8080");
    expect(endpointOf("http://[::1]:9/x")).toBe("http://[::1]:9");
    expect(endpointOf("not a url")).toBe("not a url");
  });
});

describe("EndpointSlots", () => {
  it("gives at most `limit` slots per endpoint, then hands a released slot to the first waiter", async () => {
    const slots = new EndpointSlots(2);
    const never = new AbortController().signal;
    const a = slots.tryTake("e");
    const b = slots.tryTake("e");
    expect(a && b).toBeTruthy();
    expect(slots.tryTake("e")).toBeNull();
    expect(slots.tryTake("other")).not.toBeNull();
    const order: string[] = [];
    const first = slots.take("e", never).then((r) => (order.push("first"), r));
    const second = slots.take("e", never).then((r) => (order.push("second"), r));
    a?.();
    a?.(); // a second call releases nothing more
    const r1 = await first;
    expect(order).toEqual(["first"]);
    expect(slots.inUse("e")).toBe(2);
    b?.();
    const r2 = await second;
    r1?.();
    r2?.();
    expect(slots.inUse("e")).toBe(0);
  });

  it("a wait ends with null when its signal aborts, and leaves no waiter behind", async () => {
    const slots = new EndpointSlots(1);
    const held = slots.tryTake("e");
    const stop = new AbortController();
    const waiting = slots.take("e", stop.signal);
    stop.abort();
    expect(await waiting).toBeNull();
    held?.();
    expect(slots.inUse("e")).toBe(0);
    expect(slots.tryTake("e")).not.toBeNull();
  });
});
