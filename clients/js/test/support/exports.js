// Helpers of the verifier tests that forge exports: base64, deep copies, a chain rewritten, a file
// re-signed with a key of the test's own.

import { sha1Fallback } from "../../src/audit.js";
import { canonicalJson, concat, fromBase64, sha256, toHex } from "../../src/fairness.js";
import { decode, encode } from "../../src/msgpack.js";

const encoder = new TextEncoder();

export const toBase64 = (bytes) => btoa(String.fromCharCode(...bytes));
export const copy = (value) => JSON.parse(JSON.stringify(value));
export { concat as concatBytes };

const LINK = {
  sha256: { genesis: "0".repeat(64), hash: (bytes) => toHex(sha256(bytes)) },
  sha1: { genesis: "0".repeat(40), hash: (bytes) => sha1Fallback(bytes) },
};

/** The export with `edit(bodies)` applied and every hash recomputed (a forger rewriting the chain),
 * with `algorithm` ("sha256", or "sha1": a forger downgrading the chain; default the file's own). */
export function rechained(exp, edit, algorithm = exp.chain.genesis.length === 40 ? "sha1" : "sha256") {
  const tampered = copy(exp);
  const bodies = tampered.events.map((event) => decode(fromBase64(event.body)));
  edit(bodies);
  const link = LINK[algorithm];
  let prev = link.genesis;
  tampered.events = bodies.map((body, i) => {
    const raw = encode(body);
    const event = { version: tampered.events[i]?.version ?? body.version, body: toBase64(raw), prev_hash: prev };
    event.hash = prev = link.hash(concat(encoder.encode(prev), raw));
    return event;
  });
  tampered.chain = { ...tampered.chain, algorithm: `${algorithm}(prev_hash_hex || msgpack_body)`, genesis: link.genesis,
    version: bodies.length, head: prev };
  return tampered;
}

/** A fresh Ed25519 key pair and its public key in hex (a foreign key, or a deployment's in a test). */
export async function newSigningKey() {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const publicKey = toHex(new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey)));
  return { ...pair, publicKey, id: toHex(sha256(Uint8Array.from(publicKey.match(/../g), (h) => parseInt(h, 16)))).slice(0, 16) };
}

/** The export signed by `key` (newSigningKey's), over the canonical JSON of every other field;
 * `keyId` replaces the signature's key_id (a forger naming another key's id). */
export async function signedWith(exp, key, keyId = key.id) {
  const { signature: _, ...unsigned } = exp;
  const value = new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, key.privateKey, encoder.encode(canonicalJson(unsigned))));
  return { ...unsigned, signature: { algorithm: "ed25519", key_id: keyId, public_key: key.publicKey, value: toBase64(value) } };
}
