// What the drivers print: each call's answer, or what it threw, recorded under a label in `out`.
import { sdk } from "./loopback.mjs";

/** `call(label, fn)` runs one call and records its answer (or its error) in `out`; returns the answer, or undefined
 * if it threw. An error is recorded as data: its class, checked with instanceof against the SDK's exports named in
 * `classes` (not only by name), its errorCode and message. */
export function recorder(out, classes) {
  function thrown(error) {
    return {
      error: error?.constructor?.name ?? typeof error,
      name: error?.name,
      instanceOf: classes.filter((cls) => error instanceof sdk[cls]),
      errorCode: error?.errorCode ?? null,
      message: String(error?.message ?? error),
    };
  }

  async function call(label, fn) {
    try {
      const value = await fn();
      out[label] = value === undefined ? null : value;
      return value;
    } catch (error) {
      out[label] = thrown(error);
      return undefined;
    }
  }

  return { call, thrown };
}
