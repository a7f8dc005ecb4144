// Who may have signed an export, and which schemes a game may claim (docs/fairness.md, "Pinning" and
// "No downgrades"): the JavaScript side of issue 21. audit.js's verifyExport runs these checks; they
// live here so that the trust decisions (a key_id that is not its key's, a signer the deployment
// does not list or had retired, a new game that claims an old scheme) are in one small place.
//
// Trusted keys come as the body of the deployment's GET /keys
// (`{"keys": [{"id", "algorithm", "public_key", "status", "signed_from", "signed_until"}],
// "legacy_games_before"}`; a body of before v1.3 lists only `{"id", "algorithm", "public_key"}`:
// every key counts as current) or as a plain list of public keys (hex strings). Without any, the
// verifier still checks the signature's bytes but says plainly that the signer is unpinned.

import { DEAL_VERSION, DRAW_VERSION, FairnessError, fromHex, sha256, toHex } from "./fairness.js";

/** The export formats this verifier reads: /2 adds `exported_at` (ms since the epoch). */
export const EXPORT_FORMATS = Object.freeze(["donjon.export/1", "donjon.export/2"]);

/** When SHA-256 chains and donjon-draw-1 came in (ms, UTC, the release of 2026-12-01 10:15:49): a game
 * created since then that claims no draw scheme or a SHA-1 chain is a downgrade, not a legacy game. */
export const STRONG_SCHEMES_SINCE = Date.UTC(2026, 11, 1, 10, 15, 49);

/** The draw schemes a game created since STRONG_SCHEMES_SINCE may claim. */
const STRONG_DRAWS = new Set([DRAW_VERSION, DEAL_VERSION]);

const PUBLIC_KEY = /^[0-9a-f]{64}$/;
const KEY_ID = /^[0-9a-f]{16}$/;

function refuse(why) {
  throw new FairnessError(why);
}

const isTime = (value) => Number.isSafeInteger(value) && value >= 0;
const isoOf = (ms) => new Date(ms).toISOString();

/** The key id a public key (64 hex digits) must carry: the first 16 hex digits of sha256(raw key). */
export function keyIdOf(publicKeyHex) {
  return toHex(sha256(fromHex(publicKeyHex))).slice(0, 16);
}

/** One listed key, normalised: fields a GET /keys of before v1.3 lacks are "current" and null. */
function listedKey(entry) {
  const key = typeof entry === "string" ? { public_key: entry } : entry;
  if (!key || typeof key !== "object" || typeof key.public_key !== "string") return null;
  const publicKey = key.public_key.toLowerCase();
  if (!PUBLIC_KEY.test(publicKey)) return null;
  const until = isTime(key.signed_until) ? key.signed_until : null;
  return {
    id: keyIdOf(publicKey),
    public_key: publicKey,
    status: key.status === "retired" ? "retired" : "current",
    signed_from: isTime(key.signed_from) ? key.signed_from : null,
    signed_until: until,
  };
}

/**
 * The trusted keys as one shape: `{pinned, keys, legacyGamesBefore, problem}`. `pinned` is false
 * when none were given (undefined or null); `problem` says why a value given is unusable (then no
 * key is trusted: an unreadable pin must not fall back to trusting the file's own key).
 */
export function trustedKeyList(trustedKeys) {
  if (trustedKeys === undefined || trustedKeys === null) {
    return { pinned: false, keys: [], legacyGamesBefore: null, problem: null };
  }
  const body = typeof trustedKeys === "string" ? [trustedKeys] : trustedKeys;
  const entries = Array.isArray(body) ? body : body?.keys;
  if (!Array.isArray(entries)) {
    return { pinned: true, keys: [], legacyGamesBefore: null, problem: "the trusted keys given are neither a GET /keys body nor a list of public keys" };
  }
  const keys = entries.map(listedKey).filter((key) => key !== null);
  const before = Array.isArray(body) ? null : body.legacy_games_before;
  const problem = keys.length === 0 ? "the trusted keys given list no Ed25519 public key (64 hex digits)" : null;
  return { pinned: true, keys, legacyGamesBefore: isTime(before) ? before : null, problem };
}

/** The export's `format` and, for /2, its `exported_at`; FairnessError for anything else. */
export function checkFormat(exported) {
  if (!exported || typeof exported !== "object" || Array.isArray(exported)) refuse("the file is not a JSON object");
  const { format } = exported;
  if (!EXPORT_FORMATS.includes(format)) refuse(`unknown format ${JSON.stringify(format)} (expected one of ${EXPORT_FORMATS.join(", ")})`);
  if (format !== "donjon.export/1" && !isTime(exported.exported_at)) {
    refuse(`a ${format} file names when it was exported (exported_at, ms), this one says ${JSON.stringify(exported.exported_at)}`);
  }
  if (typeof exported.id !== "string" || typeof exported.game !== "string") refuse("the file's id and game are not strings");
  return format;
}

/** The signature's key_id against its public key: a key_id that is not sha256(public key)[:16] is a
 * forgery (a file signed by one key that names another's id). Returns the key id. */
export function checkKeyId(signature) {
  if (!signature || typeof signature !== "object") refuse("the file is not signed");
  const { public_key: publicKey, key_id: keyId } = signature;
  if (typeof publicKey !== "string" || !PUBLIC_KEY.test(publicKey)) refuse("the signature's public_key is not 64 lowercase hex digits");
  const expected = keyIdOf(publicKey);
  if (typeof keyId !== "string" || !KEY_ID.test(keyId) || keyId !== expected) {
    refuse(`the key_id ${JSON.stringify(keyId)} is not sha256(public key)[:16] of the key that signed (${expected})`);
  }
  return expected;
}

/** The latest time the file can have been signed at: its exported_at (format /2), else its game's end. */
function signedNoEarlierThan(exported, finishedAt) {
  return Math.max(isTime(exported.exported_at) ? exported.exported_at : 0, isTime(finishedAt) ? finishedAt : 0);
}

/**
 * Who signed, against the trusted keys (`trustedKeyList`'s result): `{signer, detail}`, `signer`
 * "pinned" (a listed key, not retired before the file was signed) or "unpinned" (no keys given);
 * FairnessError when the signer is not trusted. `finishedAt` is game.finished's ts: a file cannot
 * have been signed before its game ended, whatever its exported_at says.
 */
export function checkSigner(exported, trust, finishedAt) {
  const id = checkKeyId(exported.signature);
  if (!trust.pinned) {
    return { signer: "unpinned", detail: `by key ${id}, the file's own; signer unpinned: no trusted keys were given, so this does not say who signed` };
  }
  if (trust.problem) refuse(trust.problem);
  const listed = trust.keys.find((key) => key.public_key === exported.signature.public_key);
  if (!listed) refuse(`signed by key ${id}, a key this deployment does not list`);
  const signedAt = signedNoEarlierThan(exported, finishedAt);
  if (listed.status === "retired" && listed.signed_until !== null && signedAt > listed.signed_until) {
    refuse(`signed by key ${id}, which this deployment retired at ${isoOf(listed.signed_until)}, before the file was signed (${isoOf(signedAt)} or later)`);
  }
  const when = listed.status === "retired"
    ? `retired, signed until ${listed.signed_until === null ? "an unknown time" : isoOf(listed.signed_until)}`
    : "current";
  return { signer: "pinned", detail: `by key ${id}, one this deployment lists (${when})` };
}

/**
 * No downgrades: the schemes game.created (`bodies[0]`) claims (`chain`, `draw`) against when it was
 * created. A game created since STRONG_SCHEMES_SINCE (or since the deployment's
 * `legacy_games_before`, when that is earlier) must claim a SHA-256 chain and a donjon-draw-* scheme;
 * an older one may be legacy, but only wholly: a legacy game had neither a SHA-256 chain nor seat
 * contributions, so one that has either is a newer game with its scheme taken out.
 * Returns `{legacy, scheme, chain, createdAt}`; FairnessError for a downgrade or an unknown name.
 */
export function checkScheme(bodies, trust) {
  const created = bodies[0];
  const payload = created?.payload;
  if (!payload || typeof payload !== "object") refuse("game.created has no payload naming its schemes");
  const { draw, chain } = payload;
  const at = created.ts;
  if (!isTime(at)) refuse(`game.created says no creation time (ts ${JSON.stringify(at)})`);
  if (draw !== undefined && !STRONG_DRAWS.has(draw)) refuse(`unknown draw scheme ${JSON.stringify(draw)}`);
  if (chain !== undefined && chain !== "sha256") refuse(`unknown chain ${JSON.stringify(chain)}`);
  const since = Math.min(STRONG_SCHEMES_SINCE, trust.legacyGamesBefore ?? STRONG_SCHEMES_SINCE);
  if (at >= since && (draw === undefined || chain === undefined)) {
    refuse(`a game created at ${isoOf(at)}, after SHA-256 chains and ${DRAW_VERSION} came in (${isoOf(since)}), claims `
      + `chain ${JSON.stringify(chain ?? "sha1")} and draw ${JSON.stringify(draw ?? "legacy")}: a downgrade`);
  }
  if (draw !== undefined && chain !== "sha256") refuse(`a ${draw} game hashes its chain with sha256, this one names ${JSON.stringify(chain ?? "none")}`);
  if (draw === undefined) {
    const contributed = bodies.some((body) => body?.type === "game.seat_taken" && body.payload?.seed_contribution != null);
    if (chain !== undefined || contributed) {
      refuse("the game names no draw scheme, yet it has "
        + (chain !== undefined ? `a ${chain} chain` : "seat contributions") + ", which only games that name one have: a downgrade");
    }
  }
  return { legacy: draw === undefined, scheme: draw ?? null, chain: chain ?? "sha1", createdAt: at };
}
