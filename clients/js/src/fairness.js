// An independent verifier of a signed game export (`donjon export`, docs/fairness.md), written from
// the specification and not from the Python code: the SHA-256 hash chain over the stored bodies,
// the seed commitment, every seat's contribution to the game seed, every draw of a Carcassonne
// game's tile order re-run with donjon-draw-1, and the node's Ed25519 signature. `donjon verify`
// re-runs every rule besides; this one needs no rules engine.
//
// SHA-256 and HMAC are computed here (WebCrypto's crypto.subtle exists only in secure contexts, and
// is asynchronous); the signature needs crypto.subtle's Ed25519 (Node 20+, current browsers).

import { CARCASSONNE_PILES } from "./carcassonne-pile.js";
import { decode } from "./msgpack.js";

export const EXPORT_FORMAT = "donjon.export/1";
export const DRAW_VERSION = "donjon-draw-1";
export const CHAIN_ALGORITHM = "sha256(prev_hash_hex || msgpack_body)";

const encoder = new TextEncoder();
const TWO_64 = 1n << 64n;

// --- bytes ----------------------------------------------------------------------------------------

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function fromHex(text) {
  if (typeof text !== "string" || !/^([0-9a-f]{2})*$/.test(text)) throw new TypeError(`not lowercase hex: ${text}`);
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

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
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

// --- SHA-256 (FIPS 180-4) and HMAC (RFC 2104) -------------------------------------------------------

const K = Uint32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** SHA-256 of bytes, as 32 bytes. */
export function sha256(bytes) {
  const length = Math.ceil((bytes.length + 9) / 64) * 64;
  const block = new Uint8Array(length);
  block.set(bytes);
  block[bytes.length] = 0x80;
  const view = new DataView(block.buffer);
  view.setUint32(length - 8, Math.floor((bytes.length * 8) / 2 ** 32));
  view.setUint32(length - 4, (bytes.length * 8) >>> 0);
  const h = Uint32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let at = 0; at < length; at += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(at + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    [a, b, c, d, e, f, g, hh].forEach((value, i) => {
      h[i] = (h[i] + value) >>> 0;
    });
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  h.forEach((value, i) => outView.setUint32(i * 4, value));
  return out;
}

/** HMAC-SHA256(key, message), as 32 bytes. */
export function hmacSha256(key, message) {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = block.map((b) => b ^ 0x36);
  const outer = block.map((b) => b ^ 0x5c);
  return sha256(concat(outer, sha256(concat(inner, message))));
}

// --- donjon-draw-1 ----------------------------------------------------------------------------------

/** One draw stream: HMAC-SHA256 blocks of (label, version, counter), 8-byte words, rejection sampling. */
export class Draw {
  constructor(key, label, version) {
    this.key = key;
    this.prefix = concat(encoder.encode(label), [0], encoder.encode(String(version)), [0]);
    this.counter = 0n;
    this.block = new Uint8Array(0);
    this.at = 0;
  }

  word() {
    if (this.at + 8 > this.block.length) {
      const counter = new Uint8Array(8);
      new DataView(counter.buffer).setBigUint64(0, this.counter++);
      this.block = hmacSha256(this.key, concat(this.prefix, counter));
      this.at = 0;
    }
    const value = new DataView(this.block.buffer).getBigUint64(this.at);
    this.at += 8;
    return value;
  }

  /** A uniform integer in [0, n), 1 <= n <= 2^64 (a Number when below 2^53, else a BigInt). */
  below(n) {
    const span = BigInt(n);
    if (span < 1n || span > TWO_64) throw new RangeError(`below(n) needs 1 <= n <= 2^64, got ${n}`);
    const limit = TWO_64 - (TWO_64 % span);
    for (;;) {
      const x = this.word();
      if (x < limit) {
        const value = x % span;
        return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
      }
    }
  }

  randrange(start, stop) {
    return stop === undefined ? this.below(start) : start + this.below(stop - start);
  }

  randint(low, high) {
    return low + this.below(high - low + 1);
  }

  choice(items) {
    if (!items.length) throw new RangeError("cannot choose from an empty sequence");
    return items[this.below(items.length)];
  }

  shuffle(items) {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
  }

  sample(items, k) {
    const pool = [...items];
    if (k < 0 || k > pool.length) throw new RangeError(`sample of ${k} from ${pool.length} items`);
    for (let i = 0; i < k; i++) {
      const j = i + this.below(pool.length - i);
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    return pool.slice(0, k);
  }

  secretSalt() {
    return toHex(hmacSha256(this.key, concat(this.prefix.subarray(0, -1), encoder.encode("\0salt")))).slice(0, 32);
  }
}

// --- seeds --------------------------------------------------------------------------------------------

/** The contribution of a seat that sent no client_seed: fixed by the server seed. */
export function serverContribution(serverSeed, seat) {
  return toHex(hmacSha256(serverSeed, encoder.encode(`donjon-seat\0${seat}`)));
}

/** The game seed every draw is keyed by: HMAC of the server seed over every seat's contribution. */
export function gameSeed(serverSeed, contributions) {
  const message = concat(encoder.encode("donjon-seed-1"), ...contributions.map((c) => encoder.encode(`\0${c}`)));
  return hmacSha256(serverSeed, message);
}

/** Canonical JSON: keys sorted at every level, no spaces (what the signature and commitments cover). */
export function canonicalJson(value) {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
}

// --- the verifier -------------------------------------------------------------------------------------

class Refused extends Error {}

function refuse(check, why) {
  throw new Refused(`${check}: ${why}`);
}

function chainOf(exp) {
  if (!exp || typeof exp !== "object" || exp.format !== EXPORT_FORMAT) refuse("format", `not a ${EXPORT_FORMAT} file`);
  if (!Array.isArray(exp.events) || !exp.events.length) refuse("format", "'events' is not a non-empty list");
  const genesis = "0".repeat(64);
  let prev = genesis;
  const bodies = exp.events.map((event, i) => {
    let raw;
    try {
      raw = fromBase64(event.body);
    } catch {
      refuse("format", `the body of event ${i + 1} is not base64`);
    }
    const version = i + 1;
    if (event.version !== version) refuse("chain", `found version ${event.version} in the place of ${version}`);
    if (event.prev_hash !== prev) refuse("chain", `version ${version}: prev_hash is not the hash of the event before`);
    if (toHex(sha256(concat(encoder.encode(prev), raw))) !== event.hash) {
      refuse("chain", `version ${version}: hash does not match the event's bytes`);
    }
    let body;
    try {
      body = decode(raw);
    } catch (error) {
      refuse("chain", `version ${version}: the body is not msgpack (${error.message})`);
    }
    if (body.game_id !== exp.id || body.version !== version) refuse("chain", `version ${version}: body names another game or version`);
    if (version === 1 && body.payload?.chain !== "sha256") refuse("chain", "this verifier checks SHA-256 games (game.created names no sha256 chain)");
    prev = event.hash;
    return body;
  });
  const chain = exp.chain ?? {};
  const expected = { algorithm: CHAIN_ALGORITHM, genesis, version: bodies.length, head: prev };
  for (const [name, value] of Object.entries(expected)) {
    if (chain[name] !== value) refuse("chain", `chain.${name} is ${JSON.stringify(chain[name])}, the events give ${JSON.stringify(value)}`);
  }
  return bodies;
}

function revealed(exp, bodies) {
  const created = bodies[0];
  const finished = bodies[bodies.length - 1];
  if (created.type !== "game.created" || created.payload.game !== exp.game) refuse("revealed", "the first event is not this game's game.created");
  if (finished.type !== "game.finished") refuse("revealed", "the last event is not game.finished: only a finished game can be verified");
  for (const name of ["seed", "secret_options"]) {
    if (canonicalJson(exp[name]) !== canonicalJson(finished.payload[name])) {
      refuse("revealed", `the file's ${name} is not the one its game.finished reveals`);
    }
  }
  if (created.payload.draw !== DRAW_VERSION) refuse("revealed", `the game draws with ${created.payload.draw}, not ${DRAW_VERSION}`);
  return { created, finished, seed: fromHex(finished.payload.seed), secret: finished.payload.secret_options };
}

function checkCommitment({ created, seed, secret }) {
  const hasSecret = secret && Object.keys(secret).length > 0;
  const bytes = hasSecret ? concat(seed, [0], encoder.encode(canonicalJson(secret))) : seed;
  if (toHex(sha256(bytes)) !== created.payload.seed_commitment) {
    refuse("commitment", "the seed (and secret options) do not match game.created's seed_commitment");
  }
}

/** The events of each append: a batch starts at an event that records its command, and at game.created. */
function batchesOf(bodies) {
  const batches = [];
  for (const body of bodies) {
    if (!batches.length || body.command != null || body.type === "game.created") batches.push([body]);
    else batches[batches.length - 1].push(body);
  }
  return batches;
}

function contributionsOf(bodies, batches, { created, seed }) {
  const contributions = new Array(created.payload.seats).fill(null);
  for (const batch of batches) {
    const sent = batch[0].command?.args?.client_seed;
    for (const body of batch) {
      if (body.type !== "game.seat_taken") continue;
      const { seat, seed_contribution: value, seed_contribution_from: from } = body.payload;
      const expected = from === "server" ? serverContribution(seed, seat) : from === "seat" ? sent : undefined;
      if (value !== expected) {
        const source = from === "server" ? "the one the server seed fixes" : "the client_seed its seat sent";
        refuse("contribution", `version ${body.version}: seat ${seat}'s seed contribution ${JSON.stringify(value)} is not ${source}`);
      }
      contributions[seat] = value;
    }
  }
  if (contributions.includes(null)) refuse("contribution", "a seat has no seed contribution");
  return contributions;
}

/** The version a batch's draws are taken on: the one before it, or, for the setup that follows the
 * last seat, the last game.seat_taken's version minus one. */
function drawVersion(batch) {
  const seats = batch.filter((body) => body.type === "game.seat_taken");
  return (seats.length ? seats[seats.length - 1].version : batch[0].version) - 1;
}

function checkTileDraws(exp, batches, key, secret) {
  const started = batches.flat().find((body) => body.type === "game_started");
  if (!started) refuse("draw", "the game never started");
  const pool = CARCASSONNE_PILES[started.payload.options.inns_cathedrals ? "inns_cathedrals" : "base"].map(([id, n]) => [id, n]);
  let total = pool.reduce((n, [, count]) => n + count, 0);
  const order = secret?.tile_order ?? null;
  let drawn = 0;
  for (const batch of batches) {
    let stream = null;
    for (const body of batch) {
      if (body.type !== "tile_drawn" && body.type !== "tile_discarded") continue;
      let expected;
      if (order) expected = order[drawn];
      else {
        stream ??= new Draw(key, exp.id, drawVersion(batch));
        let index = stream.below(total);
        expected = pool.find(([, count]) => (index -= count) < 0)[0];
      }
      if (body.payload.tile !== expected) {
        refuse("draw", `version ${body.version}: ${body.type} ${JSON.stringify(body.payload.tile)}, the seed draws ${JSON.stringify(expected)}`);
      }
      const entry = pool.find(([id]) => id === expected);
      if (!entry || entry[1] < 1) refuse("draw", `version ${body.version}: tile ${expected} is not left in the pile`);
      entry[1] -= 1;
      total -= 1;
      drawn += 1;
    }
  }
  return drawn;
}

async function checkSignature(exp, pinnedKey) {
  const signature = exp.signature;
  if (!signature || typeof signature !== "object") refuse("signature", "the file is not signed");
  if (signature.algorithm !== "ed25519") refuse("signature", `the signature's algorithm is ${signature.algorithm}, not ed25519`);
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) refuse("signature", "this environment has no WebCrypto to check Ed25519 (use https or localhost)");
  const { signature: _, ...unsigned } = exp;
  let valid = false;
  try {
    const key = await subtle.importKey("raw", fromHex(signature.public_key), { name: "Ed25519" }, false, ["verify"]);
    valid = await subtle.verify({ name: "Ed25519" }, key, fromBase64(signature.value), encoder.encode(canonicalJson(unsigned)));
  } catch {
    valid = false;
  }
  if (!valid) refuse("signature", "the signature does not match the file's contents");
  if (pinnedKey && signature.public_key !== pinnedKey.toLowerCase()) {
    refuse("signature", `the file is signed by key ${signature.key_id}, not by the key given`);
  }
}

/**
 * Check an export: format, chain, revealed values, seed commitment, seat contributions, every tile
 * draw (Carcassonne), then the signature (by `key`, the node's public key in hex, when given).
 * Resolves to `{ok, problem, game, version, draws, keyId}`; `problem` names the first failed check.
 */
export async function verifyFairness(exp, { key } = {}) {
  const result = { ok: false, problem: null, game: exp?.game ?? null, version: 0, draws: 0, keyId: null };
  try {
    const bodies = chainOf(exp);
    result.version = bodies.length;
    const secrets = revealed(exp, bodies);
    checkCommitment(secrets);
    const batches = batchesOf(bodies);
    const seedKey = gameSeed(secrets.seed, contributionsOf(bodies, batches, secrets));
    if (exp.game === "carcassonne") result.draws = checkTileDraws(exp, batches, seedKey, secrets.secret);
    await checkSignature(exp, key);
    result.keyId = exp.signature.key_id;
    result.ok = true;
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    result.problem = error.message;
  }
  return result;
}
