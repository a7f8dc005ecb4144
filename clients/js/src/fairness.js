// The fairness checks of a signed game export (`donjon export`, GET /games/{id}/export), written from
// docs/fairness.md and not from the Python code: the streams of donjon-draw-1 and donjon-draw-2, every
// seat's contribution to the game seed, every draw of every game re-derived (donjon-draw-2: every deal
// of Carcassonne, The Castle and Castle Panic and every roll; donjon-draw-1: Carcassonne's tile
// draws), and the node's Ed25519 signature. The audit (audit.js: verifyExport, what the web app's
// audit panel runs) adds them to its chain and commitment checks. `donjon verify` re-runs every rule
// besides; this needs no rules engine, only the decks of decks.js.
//
// SHA-256 and HMAC are computed here (WebCrypto's crypto.subtle exists only in secure contexts, and
// is asynchronous); the signature needs crypto.subtle's Ed25519 (Node 20+, current browsers).

import { DECKS } from "./decks.js";

export const DRAW_VERSION = "donjon-draw-1";
export const DEAL_VERSION = "donjon-draw-2";

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

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of strict base64 (RFC 4648's alphabet, `=` padding, nothing else, canonical: docs/fairness.md). */
export function fromBase64(text) {
  if (typeof text !== "string" || !BASE64.test(text)) throw new TypeError("not strict base64");
  const binary = atob(text);
  if (btoa(binary) !== text) throw new TypeError("not the canonical base64 of its bytes");
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

// --- the streams --------------------------------------------------------------------------------------

/** One draw stream: HMAC-SHA256 blocks of (label, number, counter), 8-byte words, rejection sampling. */
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

// --- donjon-draw-2: deals ------------------------------------------------------------------------------

const utf8Order = (a, b) => {
  if (typeof a === "number" && typeof b === "number") return a - b;
  const [x, y] = [encoder.encode(String(a)), encoder.encode(String(b))];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
};

/** Items sorted as docs/fairness.md sorts them: strings by their UTF-8 bytes, integers by value. */
export function sorted(items) {
  return [...items].sort(utf8Order);
}

/** `[id, count]` pairs as their items, every copy (in the pairs' order). */
export function expand(pairs) {
  return pairs.flatMap(([id, count]) => Array(count).fill(id));
}

/** The `number`-th deal of `deck`: `contents` sorted, shuffled on the stream `<game id>:deal:<deck>`, number. */
export function deal(gameSeedKey, gameId, deck, number, contents) {
  const items = sorted(contents);
  new Draw(gameSeedKey, `${gameId}:deal:${deck}`, number).shuffle(items);
  return items;
}

/** A deal being drawn from: each `take` must be its next item. */
class Dealt {
  constructor(gameSeedKey, gameId, deck, number, contents) {
    this.deck = deck;
    this.number = number;
    this.order = deal(gameSeedKey, gameId, deck, number, contents);
    this.drawn = 0;
  }

  take(item, version) {
    const at = this.drawn++;
    const where = `deal ${this.number} of ${this.deck}, draw ${at}`;
    if (at >= this.order.length) refuse(`version ${version}: ${JSON.stringify(item)} is drawn past the end of ${where}`);
    if (item !== this.order[at]) {
      refuse(`version ${version}: ${JSON.stringify(item)} is drawn, the seed deals ${JSON.stringify(this.order[at])} (${where})`);
    }
  }
}

/** A scripted order (a revealed `tile_order`) drawn like a deal. */
class Scripted {
  constructor(order) {
    this.deck = "tile_order";
    this.order = order;
    this.drawn = 0;
  }

  take(item, version) {
    const at = this.drawn++;
    if (item !== this.order[at]) {
      refuse(`version ${version}: ${JSON.stringify(item)} is drawn, the revealed tile_order has ${JSON.stringify(this.order[at])} there`);
    }
  }
}

function removeOne(list, item, version, what) {
  const at = list.indexOf(item);
  if (at < 0) refuse(`version ${version}: ${JSON.stringify(item)} is not in ${what}`);
  list.splice(at, 1);
}

function numbered(pairs) {
  return pairs.flatMap(([kind, count]) => Array.from({ length: count }, (_, i) => `${kind}#${i + 1}`));
}

const startedOf = (bodies) => bodies.find((body) => body.type === "game_started") ?? refuse("the game never started");

function tileDeal(gameSeedKey, gameId, contents, secretOptions) {
  const order = secretOptions?.tile_order;
  return order ? new Scripted(order) : new Dealt(gameSeedKey, gameId, "tiles", 0, contents);
}

/** Carcassonne: the tile deal (docs/fairness.md, The deal of each game). */
function carcassonneDraws(gameId, bodies, key, secretOptions) {
  const { options } = startedOf(bodies).payload;
  const tiles = tileDeal(key, gameId, expand(DECKS.carcassonne[options.inns_cathedrals ? "inns_cathedrals" : "base"]), secretOptions);
  for (const body of bodies) {
    if (body.type === "tile_drawn" || body.type === "tile_discarded") tiles.take(body.payload.tile, body.version);
  }
  return [tiles];
}

/** The Castle: the tile deal and the wall tiles' deal, over the dataset game_started names. */
function castleDraws(gameId, bodies, key, secretOptions) {
  const { options, dataset } = startedOf(bodies).payload;
  const data = DECKS.castle[dataset];
  if (!data) return null;
  const tiles = tileDeal(key, gameId, expand([...data.tiles, ...(options.falcon ? data.falcon_tiles : [])]), secretOptions);
  const wall = new Dealt(key, gameId, "wall_tiles", 0, expand(data.wall_tiles));
  for (const body of bodies) {
    if (body.type === "tile_drawn" || body.type === "tile_set_aside") tiles.take(body.payload.tile, body.version);
    else if (body.type === "wall_tile_taken") wall.take(body.payload.tile, body.version);
  }
  return [tiles, wall];
}

/** Castle Panic's piles before play: the monster pile's contents (checking the Easier Battles removal). */
function panicTokens(started) {
  const panic = DECKS.castle_panic;
  const { options, removed_tokens: removed } = started;
  const total = Object.fromEntries(panic.tokens);
  const expected = options.easier_battles
    ? panic.easier_battles_removed.flatMap(([kind, n]) => Array.from({ length: n }, (_, i) => `${kind}#${total[kind] - n + 1 + i}`))
    : [];
  if (canonicalJson(sorted(removed)) !== canonicalJson(sorted(expected))) {
    refuse(`game_started removes the tokens ${JSON.stringify(removed)}, the rules ${JSON.stringify(sorted(expected))}`);
  }
  const gone = new Set([...removed, ...panic.setup_monsters]);
  return numbered(panic.tokens).filter((token) => !gone.has(token));
}

/** Dwindling Resources: what a reshuffle takes out of play (the first brick and mortar of the sorted discards). */
function dwindled(options, discard) {
  if (!options.dwindling_resources) return [];
  return ["brick", "mortar"].map((kind) => sorted(discard).find((card) => card.startsWith(`${kind}#`))).filter(Boolean);
}

/** The castle deck's zones, to know each reshuffle's contents. */
class CastleDeck {
  constructor(key, gameId, options) {
    Object.assign(this, { key, gameId, options, discard: [], hands: new Map(), deals: [] });
    this.deal = new Dealt(key, gameId, "cards", 0, numbered(DECKS.castle_panic.cards));
    this.deals.push(this.deal);
  }

  hand(seat) {
    if (!this.hands.has(seat)) this.hands.set(seat, []);
    return this.hands.get(seat);
  }

  reshuffle({ version, payload }) {
    const left = this.deal.order.length - this.deal.drawn;
    if (left) refuse(`version ${version}: the deck is reshuffled with ${left} cards still to draw`);
    const expected = dwindled(this.options, this.discard);
    if (canonicalJson(sorted(payload.removed)) !== canonicalJson(sorted(expected))) {
      refuse(`version ${version}: the reshuffle removes ${JSON.stringify(payload.removed)}, the rules ${JSON.stringify(expected)}`);
    }
    for (const card of payload.removed) removeOne(this.discard, card, version, "the discard pile");
    this.deal = new Dealt(this.key, this.gameId, "cards", this.deals.length, this.discard);
    this.deals.push(this.deal);
    this.discard = [];
  }

  /** Follow one event's cards; true when it was one that moves cards. */
  follow(body) {
    const { version, payload: p } = body;
    const toDiscard = (seat, cards) => {
      for (const card of cards) removeOne(this.hand(seat), card, version, `seat ${seat}'s hand`);
      this.discard.push(...cards);
    };
    switch (body.type) {
      case "cards_drawn":
        for (const card of p.cards) this.deal.take(card, version);
        this.hand(p.seat).push(...p.cards);
        return true;
      case "deck_reshuffled":
        this.reshuffle(body);
        return true;
      case "cards_discarded":
        toDiscard(p.seat, p.cards);
        return true;
      case "card_played":
        toDiscard(p.seat, [p.card, ...(p.with ?? [])]);
        return true;
      case "card_scavenged":
        removeOne(this.discard, p.card, version, "the discard pile");
        this.hand(p.seat).push(p.card);
        return true;
      case "cards_traded":
        removeOne(this.hand(p.from), p.gave, version, `seat ${p.from}'s hand`);
        removeOne(this.hand(p.to), p.got, version, `seat ${p.to}'s hand`);
        this.hand(p.to).push(p.gave);
        this.hand(p.from).push(p.got);
        return true;
      case "player_eliminated":
        toDiscard(p.seat, [...this.hand(p.seat)]);
        return true;
      default:
        return false;
    }
  }
}

/** Castle Panic: setup arcs, monster pile, castle deck and its reshuffles, every roll. */
function castlePanicDraws(gameId, bodies, key) {
  const started = startedOf(bodies).payload;
  const arcs = new Dealt(key, gameId, "setup_arcs", 0, [1, 2, 3, 4, 5, 6]);
  const tokens = new Dealt(key, gameId, "tokens", 0, panicTokens(started));
  const cards = new CastleDeck(key, gameId, started.options);
  const rolls = { deck: "die", drawn: 0, order: [] };
  const setup = DECKS.castle_panic.setup_monsters;
  const roll = (value, version) => {
    const expected = new Draw(key, `${gameId}:die`, rolls.drawn++).randint(1, 6);
    if (value !== expected) refuse(`version ${version}: a roll of ${value}, the seed rolls ${expected} (roll ${rolls.drawn - 1})`);
  };
  for (const body of bodies) {
    const { version, payload: p } = body;
    if (cards.follow(body)) continue;
    if (body.type === "overlord_drew") for (const token of p.tokens) tokens.take(token, version);
    if (body.type !== "monster_placed" && body.type !== "token_revealed") continue;
    const token = body.type === "monster_placed" ? p.monster : p.token;
    if (p.source === "setup") {
      if (token !== setup[arcs.drawn]) refuse(`version ${version}: setup monster ${token}, the rules place ${setup[arcs.drawn]}`);
      arcs.take(p.arc, version);
    } else if (p.source === "pile") tokens.take(token, version);
    if (p.roll != null) {
      roll(p.roll, version);
      if (body.type === "monster_placed" && p.arc !== p.roll) refuse(`version ${version}: ${token} rolled ${p.roll} but stands in arc ${p.arc}`);
    }
  }
  return [arcs, tokens, ...cards.deals, rolls];
}

const DEAL_CHECKERS = { carcassonne: carcassonneDraws, castle: castleDraws, castle_panic: castlePanicDraws };

/**
 * Re-derive every draw of a donjon-draw-2 game of `game` (docs/fairness.md, The deal of each game):
 * each deal's order from the game seed and every drawn item against it, every roll. Throws
 * FairnessError at the first draw that is not the seed's; returns what was drawn of each deal
 * (`[{deck, number, drawn, of}]`), or null when this verifier has not the game's decks (another game,
 * a Castle dataset other than castle-v1).
 */
export function checkDeals(game, gameId, bodies, gameSeedKey, secretOptions) {
  const checker = DEAL_CHECKERS[game];
  const deals = checker ? checker(gameId, bodies, gameSeedKey, secretOptions) : null;
  return deals && deals.map((d) => ({ deck: d.deck, number: d.number ?? 0, drawn: d.drawn, of: d.deck === "die" ? null : d.order.length }));
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
  if (value === null || value === undefined || typeof value !== "object") return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
}

// --- the checks (each throws FairnessError naming what failed) -----------------------------------------

export class FairnessError extends Error {}

function refuse(why) {
  throw new FairnessError(why);
}

/** The events of each append: a batch starts at an event that records its command, and at game.created. */
export function batchesOf(bodies) {
  const batches = [];
  for (const body of bodies) {
    if (!batches.length || body.command != null || body.type === "game.created") batches.push([body]);
    else batches[batches.length - 1].push(body);
  }
  return batches;
}

/** Every seat's contribution to the game seed, each checked: a "server" one is the value the
 * server seed fixes, a "seat" one the client_seed its recorded seat request sent. */
export function checkContributions(bodies, serverSeed) {
  const contributions = new Array(bodies[0].payload.seats).fill(null);
  for (const batch of batchesOf(bodies)) {
    const sent = batch[0].command?.args?.client_seed;
    for (const body of batch) {
      if (body.type !== "game.seat_taken") continue;
      const { seat, seed_contribution: value, seed_contribution_from: from } = body.payload;
      const expected = from === "server" ? serverContribution(serverSeed, seat) : from === "seat" ? sent : undefined;
      if (value !== expected) {
        const source = from === "server" ? "the one the server seed fixes" : "the client_seed its seat sent";
        refuse(`version ${body.version}: seat ${seat}'s seed contribution ${JSON.stringify(value)} is not ${source}`);
      }
      contributions[seat] = value;
    }
  }
  if (contributions.includes(null)) refuse("a seat has no seed contribution");
  return contributions;
}

/** The version a batch's draws are taken on: the one before it, or, for the setup that follows the
 * last seat, the last game.seat_taken's version minus one; a timeout's bot move is decided on top
 * of the clock.expired its batch opens with. */
function drawVersion(batch) {
  if (batch[0].type === "clock.expired") return batch[0].version;
  const seats = batch.filter((body) => body.type === "game.seat_taken");
  return (seats.length ? seats[seats.length - 1].version : batch[0].version) - 1;
}

/** Re-run every tile draw of a donjon-draw-1 Carcassonne game (`pick(pile, randrange(total))` per
 * draw on the stream of its decision, or the revealed scripted tile_order); the number of draws. */
export function checkTileDraws(gameId, bodies, gameSeedKey, secretOptions) {
  const started = bodies.find((body) => body.type === "game_started");
  if (!started) refuse("the game never started");
  const tiles = started.payload.options.inns_cathedrals ? "inns_cathedrals" : "base";
  const pool = DECKS.carcassonne[tiles].map(([id, n]) => [id, n]);
  let total = pool.reduce((n, [, count]) => n + count, 0);
  const order = secretOptions?.tile_order ?? null;
  let drawn = 0;
  for (const batch of batchesOf(bodies)) {
    let stream = null;
    for (const body of batch) {
      if (body.type !== "tile_drawn" && body.type !== "tile_discarded") continue;
      let expected;
      if (order) expected = order[drawn];
      else {
        stream ??= new Draw(gameSeedKey, gameId, drawVersion(batch));
        let index = stream.below(total);
        expected = pool.find(([, count]) => (index -= count) < 0)[0];
      }
      if (body.payload.tile !== expected) {
        refuse(`version ${body.version}: ${body.type} ${JSON.stringify(body.payload.tile)}, the seed draws ${JSON.stringify(expected)}`);
      }
      const entry = pool.find(([id]) => id === expected);
      if (!entry || entry[1] < 1) refuse(`version ${body.version}: tile ${expected} is not left in the pile`);
      entry[1] -= 1;
      total -= 1;
      drawn += 1;
    }
  }
  return drawn;
}

/** The node's Ed25519 signature over the canonical JSON of the rest of the file, by `pinnedKey`
 * (hex, from GET /keys) when given; the signing key's id. */
export async function checkSignature(exported, pinnedKey, subtle = globalThis.crypto?.subtle) {
  const signature = exported.signature;
  if (!signature || typeof signature !== "object") refuse("the file is not signed");
  if (signature.algorithm !== "ed25519") refuse(`the signature's algorithm is ${signature.algorithm}, not ed25519`);
  if (!subtle) refuse("this page has no WebCrypto to check Ed25519 (open it over https or localhost)");
  const { signature: _, ...unsigned } = exported;
  let valid = false;
  try {
    const key = await subtle.importKey("raw", fromHex(signature.public_key), { name: "Ed25519" }, false, ["verify"]);
    valid = await subtle.verify({ name: "Ed25519" }, key, fromBase64(signature.value), encoder.encode(canonicalJson(unsigned)));
  } catch {
    valid = false;
  }
  if (!valid) refuse("the signature does not match the file's contents");
  if (pinnedKey && signature.public_key !== pinnedKey.toLowerCase()) {
    refuse(`the file is signed by key ${signature.key_id}, not by the key given`);
  }
  return signature.key_id;
}
