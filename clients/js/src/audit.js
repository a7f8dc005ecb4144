// The in-browser (and Node) verifier of a game export (GET /games/{id}/export, docs/protocol.md):
// the hash chain over the stored event bodies and the seed commitment against the revealed seed.
//
// WebCrypto's crypto.subtle exists only in secure contexts (https, http://127.0.0.1, localhost), so a
// page served from http://some-host has none; the small SHA-1 and SHA-256 below are used there, and
// results are the same either way (the tests compare both on the same export).

import { decode } from "./msgpack.js";

export const EXPORT_FORMAT = "donjon.export/1";
export const GENESIS_HASH = "0".repeat(40);

/** What `donjon replay` checks beyond this verifier (shown by the audit panel). */
export const REPLAY_CHECKS_BEYOND = Object.freeze([
  "every event decodes and folds through the game's rules engine, in order",
  "every decision re-runs with the revealed seed and yields exactly the stored events (each shuffle and draw)",
  "every bot move re-runs and chooses exactly the stored command under the same command id",
  "the final summary (scores, winners) is what the folded state says",
]);

const encoder = new TextEncoder();

// --- hashes -------------------------------------------------------------------------------------

function rotl(x, n) {
  return (x << n) | (x >>> (32 - n));
}

/** The message padded to 64-byte blocks with its bit length, big-endian (SHA-1 and SHA-256 alike). */
function padded(bytes) {
  const length = Math.ceil((bytes.length + 9) / 64) * 64;
  const out = new Uint8Array(length);
  out.set(bytes);
  out[bytes.length] = 0x80;
  const view = new DataView(out.buffer);
  const bits = bytes.length * 8;
  view.setUint32(length - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(length - 4, bits >>> 0);
  return view;
}

function hex(words) {
  return words.map((w) => (w >>> 0).toString(16).padStart(8, "0")).join("");
}

/** SHA-1 of bytes, lowercase hex (FIPS 180-4). */
export function sha1Fallback(bytes) {
  const view = padded(bytes);
  const h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const w = new Int32Array(80);
  for (let block = 0; block < view.byteLength; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(block + i * 4);
    for (let i = 16; i < 80; i++) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    let [a, b, c, d, e] = h;
    for (let i = 0; i < 80; i++) {
      let f, k;
      if (i < 20) [f, k] = [(b & c) | (~b & d), 0x5a827999];
      else if (i < 40) [f, k] = [b ^ c ^ d, 0x6ed9eba1];
      else if (i < 60) [f, k] = [(b & c) | (b & d) | (c & d), 0x8f1bbcdc];
      else [f, k] = [b ^ c ^ d, 0xca62c1d6];
      const t = (rotl(a, 5) + f + e + k + w[i]) | 0;
      [e, d, c, b, a] = [d, c, rotl(b, 30), a, t];
    }
    [a, b, c, d, e].forEach((v, i) => { h[i] = (h[i] + v) | 0; });
  }
  return hex(h);
}

const K256 = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

function rotr(x, n) {
  return (x >>> n) | (x << (32 - n));
}

/** SHA-256 of bytes, lowercase hex (FIPS 180-4). */
export function sha256Fallback(bytes) {
  const view = padded(bytes);
  const h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
  const w = new Int32Array(64);
  for (let block = 0; block < view.byteLength; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(block + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i]) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) | 0, c, b, a, (t1 + t2) | 0];
    }
    [a, b, c, d, e, f, g, hh].forEach((v, i) => { h[i] = (h[i] + v) | 0; });
  }
  return hex(h);
}

/** The hash functions to use: WebCrypto when this context has it, else the fallbacks above. */
export function hashers(subtle = globalThis.crypto?.subtle) {
  if (!subtle) return { source: "fallback", sha1: async (b) => sha1Fallback(b), sha256: async (b) => sha256Fallback(b) };
  const digest = async (name, bytes) =>
    [...new Uint8Array(await subtle.digest(name, bytes))].map((x) => x.toString(16).padStart(2, "0")).join("");
  return { source: "webcrypto", sha1: (b) => digest("SHA-1", b), sha256: (b) => digest("SHA-256", b) };
}

// --- helpers ------------------------------------------------------------------------------------

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function fromBase64(text) {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

function fromHex(text) {
  if (typeof text !== "string" || !/^([0-9a-f]{2})*$/.test(text)) throw new TypeError("not lowercase hex");
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/** Python's json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False). */
export function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

// --- the checks ---------------------------------------------------------------------------------

class Failure extends Error {}

function check(condition, message) {
  if (!condition) throw new Failure(message);
}

/** Verify every link; the decoded bodies. Throws Failure naming the first bad event. */
async function verifyChain(exported, sha1) {
  check(Array.isArray(exported.events) && exported.events.length > 0, "the export holds no events");
  let prev = exported.chain?.genesis ?? GENESIS_HASH;
  check(prev === GENESIS_HASH, `the chain's genesis is ${prev}, not forty zeros`);
  const bodies = [];
  for (const [index, event] of exported.events.entries()) {
    const version = index + 1;
    check(event.version === version, `event ${version}: found version ${event.version} in its place`);
    check(event.prev_hash === prev, `event ${version}: prev_hash ${event.prev_hash} is not the hash before, ${prev}`);
    let bytes;
    try {
      bytes = fromBase64(event.body);
    } catch {
      throw new Failure(`event ${version}: body is not base64`);
    }
    const hash = await sha1(concat(encoder.encode(prev), bytes));
    check(hash === event.hash, `event ${version}: hash ${event.hash} does not match its bytes (${hash})`);
    let body;
    try {
      body = decode(bytes);
    } catch (error) {
      throw new Failure(`event ${version}: body is not msgpack (${error.message})`);
    }
    check(body && body.version === version && body.game_id === exported.id, `event ${version}: body names another game or version`);
    bodies.push(body);
    prev = hash;
  }
  check(exported.chain?.head === prev, `the chain head ${exported.chain?.head} is not the last event's hash ${prev}`);
  check(exported.chain?.version === bodies.length, `the chain says ${exported.chain?.version} events, the log has ${bodies.length}`);
  return bodies;
}

/** The seed commitment of game.created against the seed (and secret options) game.finished reveals. */
async function verifySeed(exported, bodies, sha256) {
  const created = bodies[0];
  const finished = bodies[bodies.length - 1];
  check(created.type === "game.created", "the first event is not game.created");
  check(finished.type === "game.finished", "the last event is not game.finished: the seed is not revealed");
  const seed = finished.payload?.seed;
  check(exported.seed === seed, "the export's seed is not the one game.finished reveals");
  let seedBytes;
  try {
    seedBytes = fromHex(seed);
  } catch {
    throw new Failure(`the revealed seed ${seed} is not hex`);
  }
  const secret = finished.payload?.secret_options;
  const hidden = secret ? concat(seedBytes, Uint8Array.of(0), encoder.encode(canonicalJson(secret))) : seedBytes;
  const commitment = await sha256(hidden);
  const promised = created.payload?.seed_commitment;
  check(commitment === promised, `the revealed seed hashes to ${commitment}, game.created committed to ${promised}`);
  return { seed, commitment, secretOptions: secret ?? null };
}

/**
 * Verify an export. Never throws for a bad file: the result says what failed.
 * @returns {Promise<{ok: boolean, hashes: "webcrypto"|"fallback", checks: {name: string, ok: boolean, detail: string}[],
 *                    events: number, bodies: object[]}>}
 */
export async function verifyExport(exported, { subtle } = {}) {
  const { source, sha1, sha256 } = hashers(subtle === undefined ? globalThis.crypto?.subtle : subtle);
  const checks = [];
  let bodies = [];
  const run = async (name, fn) => {
    try {
      const detail = await fn();
      checks.push({ name, ok: true, detail });
      return true;
    } catch (error) {
      checks.push({ name, ok: false, detail: error instanceof Failure ? error.message : `unreadable: ${error}` });
      return false;
    }
  };
  const readable = await run("format", async () => {
    check(exported && typeof exported === "object", "the file is not a JSON object");
    check(exported.format === EXPORT_FORMAT, `unknown format ${exported.format} (expected ${EXPORT_FORMAT})`);
    return `${EXPORT_FORMAT}, game ${exported.id} (${exported.game})`;
  });
  const chained = readable && (await run("hash chain", async () => {
    bodies = await verifyChain(exported, sha1);
    return `${bodies.length} events, each linked to the one before; head ${exported.chain.head}`;
  }));
  if (chained) {
    await run("seed commitment", async () => {
      const { commitment, secretOptions } = await verifySeed(exported, bodies, sha256);
      return `sha256 of the revealed seed${secretOptions ? " and secret options" : ""} is ${commitment}, as committed at creation`;
    });
  }
  const ok = checks.length === 3 && checks.every((c) => c.ok);
  return { ok, hashes: source, checks, events: bodies.length, bodies };
}
