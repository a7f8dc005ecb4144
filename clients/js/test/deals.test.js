// donjon-draw-2 in the JavaScript verifier (src/fairness.js checkDeals, src/audit.js verifyExport),
// written from docs/fairness.md: the page's test vectors; real exports of every game made by the
// Python side (test/data/draw2-*.json, `python -m tests.service.make_export_fixture`) verify with
// every draw re-derived; a changed draw, roll or deal, a downgrade to "no scheme", loose base64 are
// refused here and by `donjon verify`; a legacy game is "legacy: weaker guarantees", never fully checked.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { LEGACY, REPLAY_CHECKS_BEYOND, verifyExport } from "../src/audit.js";
import { DECKS } from "../src/decks.js";
import { deal, Draw, expand, fromBase64, sha256, sorted, toHex } from "../src/fairness.js";
import { copy, rechained } from "./support/exports.js";
import { PYTHON } from "./support/server.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, "..", "..", "..");
const DOC = readFileSync(join(REPO, "docs", "fairness.md"), "utf8");
const KEY = Uint8Array.from({ length: 32 }, (_, i) => i);
const encoder = new TextEncoder();
const load = (name) => JSON.parse(readFileSync(join(HERE, "data", `${name}.json`), "utf8"));
const GAMES = ["carcassonne", "castle", "castle_panic"];
const digest = (order) => toHex(sha256(encoder.encode(order.join(","))));
const numbered = (pairs) => pairs.flatMap(([kind, n]) => Array.from({ length: n }, (_, i) => `${kind}#${i + 1}`));

describe("the deals of docs/fairness.md's test vectors", () => {
  const castle = DECKS.castle["castle-v1"];
  const panic = DECKS.castle_panic;
  const vectors = [
    ["tiles", expand(DECKS.carcassonne.base), 71],
    ["tiles", expand(DECKS.carcassonne.inns_cathedrals), 89],
    ["tiles", expand(castle.tiles), 60],
    ["tiles", expand([...castle.tiles, ...castle.falcon_tiles]), 78],
    ["wall_tiles", expand(castle.wall_tiles), 18],
    ["tokens", numbered(panic.tokens).filter((t) => !panic.setup_monsters.includes(t)), 43],
    ["cards", numbered(panic.cards), 49],
  ];

  for (const [deck, contents, size] of vectors) {
    test(`the ${size} ${deck} deal to the page's digest`, () => {
      assert.equal(contents.length, size);
      const order = deal(KEY, "g1", deck, 0, contents);
      assert.deepEqual(sorted(order), sorted(contents));
      const shown = order.slice(0, 6).map((item) => `\`${item}\``).join(", ");
      assert.ok(DOC.includes(`| deal \`${deck}\` 0 (${size}) | ${shown}, ...; digest \`${digest(order)}\` |`), `${deck} ${size}`);
    });
  }

  test("the setup arcs, a reshuffle, the rolls, a bot and the salt", () => {
    assert.ok(DOC.includes(`| deal \`setup_arcs\` 0 | \`[${deal(KEY, "g1", "setup_arcs", 0, [1, 2, 3, 4, 5, 6]).join(", ")}]\` |`));
    const reshuffle = deal(KEY, "g1", "cards", 1, sorted(numbered(panic.cards)).slice(0, 10));
    assert.ok(DOC.includes(`digest \`${digest(reshuffle)}\``));
    const rolls = Array.from({ length: 8 }, (_, n) => new Draw(KEY, "g1:die", n).randint(1, 6));
    assert.deepEqual(rolls, [3, 4, 5, 2, 4, 5, 5, 4]);
    assert.ok(DOC.includes(`\`[${rolls.join(", ")}]\``));
    const bot = Array.from({ length: 4 }, (_, n) => new Draw(KEY, "g1:bot:1", n).below(100));
    assert.ok(DOC.includes(`\`[${bot.join(", ")}]\``));
    assert.ok(DOC.includes(`| \`secret_salt()\` | \`${new Draw(KEY, "g1", 0).secretSalt()}\` |`));
  });

  test("sorted is by UTF-8 bytes, integers by value", () => {
    assert.deepEqual(sorted(["orc#2", "orc#10", "b", "B"]), ["B", "b", "orc#10", "orc#2"]);
    assert.deepEqual(sorted([10, 9, 1]), [1, 9, 10]);
  });
});

/** Swap the items of the first two events of `type` whose `field` differ (two draws of a deal). */
const swapFirst = (type, field) => (bodies) => {
  const found = bodies.filter((body) => body.type === type);
  const a = found[0];
  const b = found.find((body) => JSON.stringify(body.payload[field]) !== JSON.stringify(a.payload[field]));
  [a.payload[field], b.payload[field]] = [b.payload[field], a.payload[field]];
};

const TAMPERINGS = {
  "carcassonne: two tiles swapped": ["carcassonne", swapFirst("tile_drawn", "tile"), "draws: version "],
  "castle: two tiles swapped": ["castle", swapFirst("tile_drawn", "tile"), "draws: version "],
  "castle: another wall tile": [
    "castle",
    (bodies) => {
      const taken = bodies.find((body) => body.type === "wall_tile_taken");
      taken.payload.tile = taken.payload.tile === "extra_turn" ? "keep_bonus" : "extra_turn";
    },
    "draws: version ",
  ],
  "castle panic: two card draws swapped": ["castle_panic", swapFirst("cards_drawn", "cards"), "draws: version "],
  "castle panic: another roll": [
    "castle_panic",
    (bodies) => {
      const rolled = bodies.find((body) => body.type === "token_revealed" && body.payload.roll != null)
        ?? bodies.find((body) => body.type === "monster_placed" && body.payload.roll != null);
      rolled.payload.roll = (rolled.payload.roll % 6) + 1;
      if (rolled.type === "monster_placed") rolled.payload.arc = rolled.payload.roll;
    },
    "draws: version ",
  ],
  "castle panic: a setup monster in another arc": [
    "castle_panic",
    (bodies) => {
      const [a, b] = bodies.filter((body) => body.type === "monster_placed" && body.payload.source === "setup");
      [a.payload.arc, b.payload.arc] = [b.payload.arc, a.payload.arc];
    },
    "draws: version ",
  ],
  "castle panic: a reshuffle that keeps a brick": [
    "castle_panic",
    (bodies) => {
      bodies.find((body) => body.type === "deck_reshuffled").payload.removed = [];
    },
    "draws: version ",
  ],
  "no draw scheme named (a downgrade to legacy)": [
    "carcassonne",
    (bodies) => {
      delete bodies[0].payload.draw;
    },
    "scheme: a game created at ",
  ],
};

function pythonVerdict(folder, tampered, key) {
  const path = join(folder, "tampered.json");
  writeFileSync(path, JSON.stringify(tampered));
  try {
    execFileSync(PYTHON, ["-m", "service", "verify", path, "--key", key], { cwd: REPO, stdio: "pipe" });
    return [0, ""];
  } catch (error) {
    return [error.status, error.stdout.toString()];
  }
}

describe("donjon-draw-2 exports of every game made by the Python side", () => {
  const folder = mkdtempSync(join(tmpdir(), "donjon-deals-"));
  after(() => rmSync(folder, { recursive: true, force: true }));

  for (const game of GAMES) {
    test(`a ${game} game verifies with every draw re-derived`, async () => {
      const exported = load(`draw2-${game}`);
      const result = await verifyExport(exported, { key: exported.signature.public_key });
      assert.equal(result.ok, true, JSON.stringify(result.checks));
      assert.equal(result.verdict, "verifies");
      assert.equal(result.legacy, false);
      const names = ["format", "hash chain", "scheme", "batches", "seed commitment", "sealed parts", "seat contributions", "draws", "signature"];
      assert.deepEqual(result.checks.map((c) => [c.name, c.ok]), names.map((name) => [name, true]));
      assert.deepEqual(result.beyond, [...REPLAY_CHECKS_BEYOND]);
      const draws = result.checks.find((c) => c.name === "draws").detail;
      const decks = { carcassonne: ["tiles 0"], castle: ["tiles 0", "wall_tiles 0"], castle_panic: ["setup_arcs 0", "tokens 0", "cards 0", "cards 1", "rolls"] };
      for (const deck of decks[game]) assert.ok(draws.includes(deck), draws);
    });
  }

  for (const [name, [game, edit, reason]] of Object.entries(TAMPERINGS)) {
    test(`${name} is refused, here and by donjon verify`, async () => {
      const exported = load(`draw2-${game}`);
      const tampered = rechained(exported, edit);
      const result = await verifyExport(tampered);
      const failed = result.checks.find((c) => !c.ok);
      assert.equal(result.ok, false);
      assert.ok(`${failed.name}: ${failed.detail}`.startsWith(reason), `${failed.name}: ${failed.detail}`);
      const [status, output] = pythonVerdict(folder, tampered, exported.signature.public_key);
      assert.equal(status, 1, output);
      assert.ok(output.startsWith("MISMATCH  re-run: "), output);
    });
  }

  test("a body in loose base64 is refused, here and by donjon verify", async () => {
    const exported = load("draw2-castle");
    const tampered = copy(exported);
    const body = tampered.events.find((event) => event.body.endsWith("=")).body;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const last = body.replace(/=+$/, "").length - 1;
    const loose = body.slice(0, last) + alphabet[alphabet.indexOf(body[last]) ^ 1] + body.slice(last + 1);
    assert.deepEqual(Uint8Array.from(atob(loose), (c) => c.charCodeAt(0)), fromBase64(body)); // atob reads the same bytes
    tampered.events.find((event) => event.body === body).body = loose;
    const failed = (await verifyExport(tampered)).checks.find((c) => !c.ok);
    assert.match(`${failed.name}: ${failed.detail}`, /^hash chain: event \d+: body is not strict base64$/);
    const [status, output] = pythonVerdict(folder, tampered, exported.signature.public_key);
    assert.equal(status, 1);
    assert.equal(output.trim(), "MISMATCH  format: an event's body is not strict base64");
  });
});

describe("what the verifier says of games it cannot check in full", () => {
  test("a legacy game verifies as 'legacy: weaker guarantees', never as fully checked", async () => {
    const exported = load("legacy-castle");
    const result = await verifyExport(exported, { key: exported.signature.public_key });
    assert.equal(result.ok, true, JSON.stringify(result.checks));
    assert.equal(result.legacy, true);
    assert.equal(result.verdict, LEGACY);
    assert.equal(result.verdict, "legacy: weaker guarantees");
    assert.ok(result.checks.find((c) => c.name === "scheme").detail.startsWith(LEGACY));
    assert.ok(!result.checks.some((c) => c.name === "draws" || c.name === "tile draws"));
    assert.ok(result.beyond.some((line) => line.includes("every draw of this legacy game")));
  });

  test("a donjon-draw-1 game of another game than Carcassonne lists its draws as donjon verify's", async () => {
    const exported = load("carcassonne-export");
    const asCastle = rechained({ ...exported, game: "castle" }, (bodies) => {
      bodies[0].payload.game = "castle";
    });
    const result = await verifyExport(asCastle);
    assert.ok(result.beyond.some((line) => line.includes("every draw of this castle game (donjon-draw-1")));
    assert.ok(!result.checks.some((c) => c.name === "tile draws"));
  });
});
