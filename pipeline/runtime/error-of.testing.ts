// Test helper: the error of a given class a call throws (any other error, or none, fails the test).
import { RequestError } from "./errors.ts";

export function errorOf<E extends Error>(fn: () => unknown, type: new (...args: never[]) => E): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error("did not throw");
}

export const requestErrorOf = (fn: () => unknown): RequestError => errorOf(fn, RequestError);
