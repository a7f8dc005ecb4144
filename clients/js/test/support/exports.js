// Helpers of the verifier tests that forge exports: base64, deep copies, a chain rewritten.

import { concat, fromBase64, sha256, toHex } from "../../src/fairness.js";
import { decode, encode } from "../../src/msgpack.js";

const encoder = new TextEncoder();

export const toBase64 = (bytes) => btoa(String.fromCharCode(...bytes));
export const copy = (value) => JSON.parse(JSON.stringify(value));
export { concat as concatBytes };

/** The export with `edit(bodies)` applied and every hash recomputed (a forger rewriting the chain). */
export function rechained(exp, edit) {
  const tampered = copy(exp);
  const bodies = tampered.events.map((event) => decode(fromBase64(event.body)));
  edit(bodies);
  let prev = tampered.chain.genesis;
  tampered.events.forEach((event, i) => {
    const raw = encode(bodies[i]);
    event.body = toBase64(raw);
    event.prev_hash = prev;
    event.hash = prev = toHex(sha256(concat(encoder.encode(prev), raw)));
  });
  tampered.chain.head = prev;
  return tampered;
}
