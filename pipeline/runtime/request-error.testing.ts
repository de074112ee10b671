// Test helper: the RequestError a call throws (any other error, or none, fails the test).
import { RequestError } from "./errors.ts";

export function requestErrorOf(fn: () => unknown): RequestError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RequestError) return err;
    throw err;
  }
  throw new Error("did not throw");
}
