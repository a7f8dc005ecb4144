// The in-browser (and Node) verifier of a game export (GET /games/{id}/export, docs/protocol.md):
// the hash chain over the stored event bodies (SHA-256, or SHA-1 in games created before v1.2), the
// seed commitment against the revealed seed, the events' sealed parts opened with the revealed
// seed's hiding key (games created with "hidden"), and, for games that draw with donjon-draw-2 or
// donjon-draw-1, every seat's seed contribution, the draws this verifier can re-derive (every draw
// of every game under donjon-draw-2; a Carcassonne game's tiles under donjon-draw-1) and the
// signature (fairness.js, docs/fairness.md), by a key the caller trusts (trust.js: the deployment's
// GET /keys; a forged key_id, an unlisted or retired signer and a downgraded scheme are refused).
// Its result says what it checked (`checks`) and what only `donjon verify` checks (`beyond`); a game recorded before donjon-draw-1 is "legacy: weaker
// guarantees", never fully checked.
//
// WebCrypto's crypto.subtle exists only in secure contexts (https, http://127.0.0.1, localhost), so a
// page served from http://some-host has none; the small SHA-1 and SHA-256 below and AES-GCM
// (aesgcm.js) are used there, and results are the same either way (the tests compare both on the
// same export).

import { aesGcmOpen } from "./aesgcm.js";
import {
  canonicalJson, checkContributions, checkDeals, checkSignature, checkTileDraws, concat, DEAL_VERSION, DRAW_VERSION,
  FairnessError, fromBase64, fromHex, gameSeed, hmacSha256, sha256, toHex,
} from "./fairness.js";
import { decode } from "./msgpack.js";
import { checkFormat, checkScheme, checkSigner, trustedKeyList } from "./trust.js";

export { canonicalJson };

/** The format exports are written in (with `exported_at`); trust.js EXPORT_FORMATS lists every one
 * this reads (`donjon.export/1` files, written before, still verify). */
export const EXPORT_FORMAT = "donjon.export/2";
/** The sealing at rest a game's game.created names (docs/fairness.md, "Sealed at rest"). */
export const HIDDEN = "donjon-hidden-1";
const SEALED_KEYS = new Set(["type", "payload", "command"]);
/** The commands a game that seals keeps in clear: every argument of theirs its events publish. */
const PUBLIC_COMMANDS = new Set(["take_seat", "create_game", "rematch", "resign", "undo"]);
export const GENESIS_HASH = "0".repeat(40);
/** The chain's genesis and description per algorithm (a game's game.created names its own). */
const CHAINS = Object.freeze({
  sha1: { genesis: GENESIS_HASH, algorithm: "sha1(prev_hash_hex || msgpack_body)" },
  sha256: { genesis: "0".repeat(64), algorithm: "sha256(prev_hash_hex || msgpack_body)" },
});

/** What `donjon verify` and `donjon replay` check beyond this verifier, for every game (the audit
 * panel shows these and, per file, `beyond` of verifyExport's result). */
export const REPLAY_CHECKS_BEYOND = Object.freeze([
  "every event's stored clear part is exactly what a spectator may see of it (the rest sealed)",
  "every event decodes and folds through the game's rules engine, in order",
  "every decision re-runs with the revealed seed and yields exactly the stored events",
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

/** SHA-256 of bytes, lowercase hex (fairness.js's, FIPS 180-4). */
export function sha256Fallback(bytes) {
  return toHex(sha256(bytes));
}

/** The hash functions to use: WebCrypto when this context has it, else the fallbacks above. */
export function hashers(subtle = globalThis.crypto?.subtle) {
  if (!subtle) return { source: "fallback", sha1: async (b) => sha1Fallback(b), sha256: async (b) => sha256Fallback(b) };
  const digest = async (name, bytes) =>
    [...new Uint8Array(await subtle.digest(name, bytes))].map((x) => x.toString(16).padStart(2, "0")).join("");
  return { source: "webcrypto", sha1: (b) => digest("SHA-1", b), sha256: (b) => digest("SHA-256", b) };
}

// --- helpers ------------------------------------------------------------------------------------

// --- the checks ---------------------------------------------------------------------------------

class Failure extends Error {}

function check(condition, message) {
  if (!condition) throw new Failure(message);
}

/** The chain algorithm the game's first event (game.created) names: sha1 when it names none (any
 * other value than "sha256" is unknown to verifyChain). */
function chainOf(exported) {
  let created = null;
  try {
    created = decode(fromBase64(exported.events[0].body));
  } catch {
    // a damaged first event: the link check below names it
  }
  const named = created?.payload?.chain;
  return named === undefined ? "sha1" : named;
}

/** Verify every link; the decoded bodies. Throws Failure naming the first bad event. */
async function verifyChain(exported, hashes) {
  check(Array.isArray(exported.events) && exported.events.length > 0, "the export holds no events");
  try {
    fromBase64(exported.events[0].body);
  } catch {
    throw new Failure("event 1: body is not strict base64");
  }
  const name = chainOf(exported);
  check(name === "sha1" || name === "sha256", `game.created names the chain ${JSON.stringify(name)}, unknown to this verifier`);
  const { genesis, algorithm } = CHAINS[name];
  const digest = hashes[name];
  let prev = exported.chain?.genesis ?? genesis;
  check(prev === genesis, `the chain's genesis is ${prev}, not ${genesis.length} zeros`);
  check((exported.chain?.algorithm ?? algorithm) === algorithm, `the chain says ${exported.chain?.algorithm}, the game hashes ${algorithm}`);
  const bodies = [];
  for (const [index, event] of exported.events.entries()) {
    const version = index + 1;
    check(event.version === version, `event ${version}: found version ${event.version} in its place`);
    check(event.prev_hash === prev, `event ${version}: prev_hash ${event.prev_hash} is not the hash before, ${prev}`);
    let bytes;
    try {
      bytes = fromBase64(event.body);
    } catch {
      throw new Failure(`event ${version}: body is not strict base64`);
    }
    const hash = await digest(concat(encoder.encode(prev), bytes));
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

/** The batches of the log (docs/fairness.md: a batch starts at an event whose body has a command):
 * every event without one belongs to the batch the last command opened, so it carries that command's
 * id. An event moved into another batch, or one inserted between batches, breaks this. */
function checkBatches(bodies) {
  let opened = null;
  let count = 0;
  for (const body of bodies) {
    if (body.command != null) {
      opened = body;
      count += 1;
      continue;
    }
    const id = opened?.command_id ?? null;
    check((body.command_id ?? null) === id, `event ${body.version}: command id ${JSON.stringify(body.command_id ?? null)} `
      + `inside the batch event ${opened?.version ?? "(none)"} opened, whose command id is ${JSON.stringify(id)}`);
  }
  return count;
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
  return { seed, commitment, secretOptions: secret ?? null, seedBytes };
}

/** One sealed part's plaintext: WebCrypto's AES-GCM where the page has it, else aesgcm.js. */
async function opened(sealed, key, associatedData, subtle) {
  const nonce = sealed.subarray(0, 12);
  const rest = sealed.subarray(12);
  if (!subtle) return aesGcmOpen(key, nonce, rest, associatedData);
  const imported = await subtle.importKey("raw", key, "AES-GCM", false, ["decrypt"]);
  const params = { name: "AES-GCM", iv: nonce, additionalData: associatedData, tagLength: 128 };
  return new Uint8Array(await subtle.decrypt(params, imported, rest));
}

/** The bodies with every sealed part opened (what the clear part leaves out put back), and how many
 * there were. A game whose game.created names no sealing may have none. */
async function openSealed(exported, bodies, seedBytes, subtle) {
  const hidden = bodies[0].payload?.hidden;
  const count = bodies.filter((body) => body.sealed != null).length;
  if (hidden === undefined) {
    check(count === 0, "events carry sealed parts, but game.created names no sealing");
    return { bodies, count };
  }
  check(hidden === HIDDEN, `game.created names the sealing ${JSON.stringify(hidden)}, not ${HIDDEN}`);
  const key = hmacSha256(seedBytes, encoder.encode(HIDDEN));
  const out = [];
  for (const body of bodies) {
    const clearCommand = body.command != null && (PUBLIC_COMMANDS.has(body.command.type) || Object.keys(body.command).length === 0);
    check(body.command == null || clearCommand, `event ${body.version}: its command is stored in clear`);
    if (body.sealed == null) {
      out.push(body);
      continue;
    }
    check(body.sealed instanceof Uint8Array && body.sealed.length >= 28, `event ${body.version}: its sealed part is not bytes`);
    const bound = encoder.encode(`${HIDDEN}\0${exported.id}\0${body.version}\0${body.type}`);
    let part;
    try {
      part = decode(await opened(body.sealed, key, bound, subtle));
    } catch {
      throw new Failure(`event ${body.version}: its sealed part does not open with the revealed seed's hiding key`);
    }
    const keys = part && typeof part === "object" && !Array.isArray(part) ? Object.keys(part) : [];
    check(keys.length > 0 && keys.every((k) => SEALED_KEYS.has(k)), `event ${body.version}: its sealed part is not a map of type, payload, command`);
    const { sealed: _, ...clear } = body;
    out.push({ ...clear, ...part });
  }
  return { bodies: out, count };
}

/** Run a check of fairness.js as a Failure of this verifier. */
async function fairness(fn) {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof FairnessError) throw new Failure(error.message);
    throw error;
  }
}

/**
 * Verify an export. Never throws, whatever `exported` is: the result says what failed.
 * `trustedKeys` pins the signer (trust.js): the body of the deployment's GET /keys, or a list of
 * public keys (hex); `key`, one public key, is the same as `trustedKeys: [key]`. Without either,
 * every other check runs and the result says `signer: "unpinned"`.
 * `subtle` (tests: `null`) picks the hashes; the signature always needs the page's WebCrypto.
 */
export async function verifyExport(exported, options = {}) {
  try {
    return await verifyUnguarded(exported, options ?? {});
  } catch (error) {
    // A bug or an input no check foresaw: still a verdict, never a throw (issue 21, "robust").
    const detail = `the verifier could not read the file: ${error?.message ?? error}`;
    return { ok: false, legacy: false, verdict: "does not verify", signer: "unchecked", keyId: null, hashes: "fallback",
      checks: [{ name: "format", ok: false, detail }], beyond: [...REPLAY_CHECKS_BEYOND], events: 0, bodies: [] };
  }
}

async function verifyUnguarded(exported, { subtle, key, trustedKeys }) {
  const crypto = subtle === undefined ? globalThis.crypto?.subtle : subtle;
  const hashes = hashers(crypto);
  const trust = trustedKeyList(trustedKeys ?? (key ? [key] : null));
  const checks = [];
  let bodies = [];
  const run = async (name, fn) => {
    try {
      const detail = await fn();
      checks.push({ name, ok: true, detail });
      return true;
    } catch (error) {
      const known = error instanceof Failure || error instanceof FairnessError;
      checks.push({ name, ok: false, detail: known ? error.message : `unreadable: ${error}` });
      return false;
    }
  };
  const readable = await run("format", async () => {
    const format = checkFormat(exported);
    return `${format}, game ${exported.id} (${exported.game})`;
  });
  const chained = readable && (await run("hash chain", async () => {
    bodies = await verifyChain(exported, hashes);
    return `${bodies.length} events, each linked to the one before (${chainOf(exported)}); head ${exported.chain.head}`;
  }));
  let scheme = null;
  const claimed = chained && (await run("scheme", async () => {
    scheme = checkScheme(bodies, trust);
    return schemeDetail(scheme);
  }));
  const batched = claimed && (await run("batches", async () => {
    const count = checkBatches(bodies);
    return `${count} batches, every event after a batch's command under that command's id`;
  }));
  let revealed = null;
  const committed = batched && (await run("seed commitment", async () => {
    revealed = await verifySeed(exported, bodies, hashes.sha256);
    const { commitment, secretOptions } = revealed;
    return `sha256 of the revealed seed${secretOptions ? " and secret options" : ""} is ${commitment}, as committed at creation`;
  }));
  const unsealed = committed && (await run("sealed parts", async () => {
    const result = await openSealed(exported, bodies, revealed.seedBytes, crypto);
    bodies = result.bodies;
    return result.count
      ? `${result.count} sealed parts, each opened with the revealed seed's hiding key, bound to its game, version and type`
      : "no sealed parts";
  }));
  const beyond = [...REPLAY_CHECKS_BEYOND];
  if (unsealed) await checkDraws(exported, bodies, revealed, scheme, run, beyond);
  let signer = "unchecked";
  if (committed) {
    const signed = await run("signature", async () => {
      const found = checkSigner(exported, trust, bodies[bodies.length - 1]?.ts);
      // Ed25519 comes from the page's own WebCrypto (the `subtle` option picks only the hashes).
      await checkSignature(exported, null);
      signer = found.signer;
      return `Ed25519 ${found.detail}`;
    });
    if (!signed) signer = "refused";
  }
  const ok = checks.length >= 3 && checks.every((c) => c.ok);
  const legacy = ok && Boolean(scheme?.legacy);
  const verdict = !ok ? "does not verify" : legacy ? LEGACY : signer === "unpinned" ? UNPINNED_VERDICT : "verifies";
  const keyId = typeof exported?.signature?.key_id === "string" ? exported.signature.key_id : null;
  return { ok, legacy, verdict, signer, keyId, hashes: hashes.source, checks, beyond, events: bodies.length, bodies };
}

/** The verdict of a file that passes every check but whose signer nobody pinned. */
export const UNPINNED_VERDICT = "verifies, signer unpinned";

function schemeDetail({ legacy, scheme, chain, createdAt }) {
  const created = `created ${new Date(createdAt).toISOString()}`;
  if (legacy) {
    return `${LEGACY}: the game names no draw scheme (${created}, before ${DRAW_VERSION}: Python's random.Random, `
      + "SHA-1 and no seat contributions); its draws are re-run only by donjon verify";
  }
  const how = scheme === DEAL_VERSION ? "every deck dealt once from the game seed" : "a stream per decision";
  return `${scheme} (${how}), chain ${chain}, ${created}`;
}

export const LEGACY = "legacy: weaker guarantees";

/** The first key some object of the (valid) JSON `text` names twice, or null. */
function duplicateKey(text) {
  const objects = []; // per open object its keys, per open array null
  let wantKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const keys = objects[objects.length - 1];
      if (keys && wantKey) {
        const key = JSON.parse(text.slice(i, end + 1));
        if (keys.has(key)) return key;
        keys.add(key);
        wantKey = false;
      }
      i = end;
    } else if (c === "{") {
      objects.push(new Set());
      wantKey = true;
    } else if (c === "[") objects.push(null);
    else if (c === "}" || c === "]") objects.pop();
    else if (c === ",") wantKey = objects[objects.length - 1] instanceof Set;
  }
  return null;
}

/** An export file's JSON, refused (SyntaxError) when it is not JSON or when an object names a key
 * twice (docs/fairness.md: two parsers could keep different values). */
export function parseExport(text) {
  const value = JSON.parse(text);
  const twice = duplicateKey(text);
  if (twice !== null) throw new SyntaxError(`the key ${JSON.stringify(twice)} appears twice in one object`);
  return value;
}

/** verifyExport on the text of a file (parseExport first): a file that is not JSON, or names a key
 * twice, is a "format" mismatch like any other. Never throws. */
export async function verifyExportText(text, options = {}) {
  let parsed;
  try {
    parsed = parseExport(String(text));
  } catch (error) {
    return { ok: false, legacy: false, verdict: "does not verify", signer: "unchecked", keyId: null, hashes: "fallback",
      checks: [{ name: "format", ok: false, detail: `not an export's JSON: ${error.message}` }],
      beyond: [...REPLAY_CHECKS_BEYOND], events: 0, bodies: [] };
  }
  return verifyExport(parsed, options);
}

/** The checks of the draws the game's scheme (trust.js checkScheme's result) lets this verifier
 * re-derive, each added with `run`; what it cannot is added to `beyond`. */
async function checkDraws(exported, bodies, revealed, { legacy, scheme }, run, beyond) {
  if (legacy) {
    beyond.push("every draw of this legacy game (Python's random.Random: only donjon verify re-runs it)");
    return;
  }
  let seedKey = null;
  const contributed = await run("seat contributions", () => fairness(() => {
    const contributions = checkContributions(bodies, revealed.seedBytes);
    seedKey = gameSeed(revealed.seedBytes, contributions);
    return `${contributions.length} seats, each contribution in the game seed ${toHex(seedKey)}`;
  }));
  if (!contributed) return;
  if (scheme === DEAL_VERSION) await checkDealt(exported, bodies, seedKey, revealed, run, beyond);
  else if (exported.game === "carcassonne") {
    await run("tile draws", () => fairness(() => {
      const drawn = checkTileDraws(exported.id, bodies, seedKey, revealed.secretOptions);
      return `${drawn} tiles, each the one ${revealed.secretOptions?.tile_order ? "the revealed tile_order" : "donjon-draw-1"} gives`;
    }));
  } else beyond.push(`every draw of this ${exported.game} game (donjon-draw-1: only donjon verify re-runs them)`);
}

/** Every deal and roll of a donjon-draw-2 game (fairness.js checkDeals), as the check "draws". */
async function checkDealt(exported, bodies, seedKey, revealed, run, beyond) {
  let unknown = false;
  await run("draws", () => fairness(() => {
    const deals = checkDeals(exported.game, exported.id, bodies, seedKey, revealed.secretOptions);
    if (deals === null) {
      unknown = true;
      return "none re-derived here: this verifier has no decks for this game's data";
    }
    const parts = deals.map((d) => (d.of === null ? `${d.drawn} rolls` : `${d.deck} ${d.number}: ${d.drawn} of ${d.of}`));
    return `each the one the seed deals (${parts.join("; ")})`;
  }));
  if (unknown) beyond.push(`every draw of this ${exported.game} game (its decks are not in this verifier's tables)`);
}
