// The JavaScript verifier (src/audit.js verifyExport with src/fairness.js, what the web app's audit
// panel runs) against the specification's test vectors and a signed Carcassonne export made by the Python side (test/data, written by
// `python -m tests.service.make_export_fixture`): it verifies, and every tampering is refused with
// its reason, by this verifier and by `donjon verify` alike.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { aesGcmOpen } from "../src/aesgcm.js";
import { verifyExport } from "../src/audit.js";
import { DECKS } from "../src/decks.js";
import { decode } from "../src/msgpack.js";
import {
  canonicalJson,
  checkTileDraws,
  Draw,
  fromHex,
  gameSeed,
  hmacSha256,
  serverContribution,
  sha256,
  toHex,
} from "../src/fairness.js";
import { concatBytes, copy, rechained, toBase64 } from "./support/exports.js";
import { PYTHON } from "./support/server.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, "..", "..", "..");
const EXPORT = JSON.parse(readFileSync(join(HERE, "data", "carcassonne-export.json"), "utf8"));
const NODE_KEY = EXPORT.signature.public_key;
const KEY = Uint8Array.from({ length: 32 }, (_, i) => i);
const encoder = new TextEncoder();

describe("donjon-draw-1 and the seeds, against docs/fairness.md", () => {
  test("SHA-256 and HMAC-SHA256 are the standard ones", () => {
    assert.equal(toHex(sha256(encoder.encode("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert.equal(toHex(sha256(new Uint8Array(1000).fill(97))), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
    assert.equal(
      toHex(hmacSha256(KEY, concatBytes(encoder.encode("g1\x007\x00"), new Uint8Array(8)))),
      "45af88f65296091e8dc804d8c9410fbfe71cb6c663a8b64fdcd804dd0a49a1d5",
    );
  });

  test("the call sequence of the test vectors gives its outputs", () => {
    const draw = new Draw(KEY, "g1", 7);
    assert.deepEqual([draw.below(6), draw.below(6), draw.below(6)], [0, 1, 3]);
    assert.equal(draw.randint(1, 6), 6);
    assert.equal(draw.choice(["A", "B", "C", "D", "E"]), "B");
    const cards = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    draw.shuffle(cards);
    assert.deepEqual(cards, [3, 1, 8, 0, 6, 5, 7, 2, 4, 9]);
    assert.deepEqual(draw.sample([..."abcdefgh"], 3), ["h", "a", "b"]);
    assert.equal(draw.below(2n ** 64n), 441911670789100493n); // above 2^53: a BigInt
    assert.equal(new Draw(KEY, "g1", 7).secretSalt(), "6905346986fb5885d7ddea2908f20218");
    const bot = new Draw(KEY, "g1:bot:1", 7);
    assert.deepEqual([bot.below(100), bot.below(100), bot.below(100), bot.below(100)], [24, 93, 52, 7]);
    assert.equal(new Draw(KEY, "g1", 0).below(2n ** 63n + 1n), 7477941162714571365n); // the first word is rejected
  });

  test("contributions and the game seed", () => {
    const zero = new Uint8Array(32);
    assert.equal(serverContribution(zero, 0), "63a7f25843fbb033ce53d9aee824de5ecf17eefed60a344a8965847af611c631");
    const seat1 = serverContribution(zero, 1);
    assert.equal(toHex(gameSeed(zero, ["alice-seed", seat1])), "8e72f55913770c62773ab1c27d88ddab1a85db8b1deb32f7311beccbd9d1761c");
  });

  test("the doc lists the vectors this test checks", () => {
    const doc = readFileSync(join(REPO, "docs", "fairness.md"), "utf8");
    for (const value of ["`[3,1,8,0,6,5,7,2,4,9]`", "`441911670789100493`", "`24, 93, 52, 7`", "`7477941162714571365`"]) {
      assert.ok(doc.includes(value), value);
    }
  });

  test("a timeout's bot move draws on top of the clock.expired its batch opens with", () => {
    const pile = DECKS.carcassonne.base;
    const total = pile.reduce((n, [, count]) => n + count, 0);
    const tileAt = (version) => {
      let index = new Draw(KEY, "g1", version).below(total);
      return pile.find(([, count]) => (index -= count) < 0)[0];
    };
    const body = (version, type, payload, command = null) => ({ version, type, payload, command });
    const timeout = { type: "clock_timeout", args: { seat: 0, move: { type: "pass", args: {} } } };
    const log = (tile) => [
      body(1, "game_started", { options: { inns_cathedrals: false } }, { type: "start" }),
      body(2, "clock.expired", { seat: 0 }, timeout),
      body(3, "tile_drawn", { tile }),
    ];
    assert.equal(checkTileDraws("g1", log(tileAt(2)), KEY, null), 1);
    if (tileAt(1) !== tileAt(2)) assert.throws(() => checkTileDraws("g1", log(tileAt(1)), KEY, null), /the seed draws/);
  });
});

const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

async function resigned(exp) {
  const { privateKey, publicKey } = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const { signature: _, ...unsigned } = exp;
  const value = new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, privateKey, encoder.encode(canonicalJson(unsigned))));
  const publicHex = toHex(new Uint8Array(await crypto.subtle.exportKey("raw", publicKey)));
  return { ...unsigned, signature: { algorithm: "ed25519", key_id: toHex(sha256(fromHex(publicHex))).slice(0, 16), public_key: publicHex, value: toBase64(value) } };
}

const TAMPERINGS = {
  "one byte in an event": [
    (exp) => {
      const tampered = copy(exp);
      const raw = fromBase64(tampered.events[5].body);
      raw[raw.length - 1] ^= 1;
      tampered.events[5].body = toBase64(raw);
      return tampered;
    },
    "hash chain: event 6: hash ",
    "chain: game '{id}': hash chain broken at version 6: hash does not match",
  ],
  "a swapped event": [
    (exp) => {
      const tampered = copy(exp);
      [tampered.events[6], tampered.events[7]] = [tampered.events[7], tampered.events[6]];
      return tampered;
    },
    "hash chain: event 7: found version 8 in its place",
    "chain: game '{id}': hash chain broken at version 7: found version 8",
  ],
  "two draws swapped, the chain rewritten": [
    (exp) =>
      rechained(exp, (bodies) => {
        const [a, b] = bodies.filter((body) => body.type === "tile_drawn").slice(1, 3);
        [a.payload, b.payload] = [b.payload, a.payload];
      }),
    "tile draws: version ",
    "re-run: versions ",
  ],
  "a changed seed": [
    (exp) => {
      const tampered = rechained(exp, (bodies) => {
        bodies[bodies.length - 1].payload.seed = "00".repeat(32);
      });
      tampered.seed = "00".repeat(32);
      return tampered;
    },
    "seed commitment: the revealed seed hashes to ",
    "re-run: the seed (and secret options) do not match game.created's seed_commitment",
  ],
  "a wrong seat contribution": [
    (exp) =>
      rechained(exp, (bodies) => {
        bodies.find((body) => body.type === "game.seat_taken" && body.payload.seat === 1).payload.seed_contribution = "0".repeat(64);
      }),
    "seat contributions: version 2: seat 1's seed contribution",
    "re-run: version 2: seat 1's seed contribution",
  ],
  "a sealed part changed, the chain rewritten": [
    (exp) =>
      rechained(exp, (bodies) => {
        const body = bodies.find((b) => b.sealed);
        body.sealed[body.sealed.length - 1] ^= 1;
      }),
    "sealed parts: event ",
    "re-run: game '{id}' version ",
  ],
  "a sealed part moved to another event, the chain rewritten": [
    (exp) =>
      rechained(exp, (bodies) => {
        const [a, b] = bodies.filter((body) => body.sealed).slice(1, 3);
        [a.sealed, b.sealed] = [b.sealed, a.sealed];
      }),
    "sealed parts: event ",
    "re-run: game '{id}' version ",
  ],
  "a command put in clear, the chain rewritten": [
    (exp) =>
      rechained(exp, (bodies) => {
        const key = hmacSha256(fromHex(exp.seed), encoder.encode("donjon-hidden-1"));
        for (const body of bodies.filter((b) => b.sealed)) {
          const bound = encoder.encode(`donjon-hidden-1\0${exp.id}\0${body.version}\0${body.type}`);
          const part = decode(aesGcmOpen(key, body.sealed.subarray(0, 12), body.sealed.subarray(12), bound));
          if (Object.keys(part).join() !== "command") continue;
          body.command = part.command;
          delete body.sealed;
          return;
        }
      }),
    "sealed parts: event ",
    "re-run: version ",
  ],
  "a re-signed file with another key": [
    resigned,
    "signature: signed by key ",
    "signature: the file is signed by key ",
  ],
};

/** The first failed check of verifyExport, as "name: detail" (null when every check passed). */
async function firstFailure(exp, options) {
  const { checks } = await verifyExport(exp, options);
  const failed = checks.find((check) => !check.ok);
  return failed ? `${failed.name}: ${failed.detail}` : null;
}

describe("the verifier on an export made by the Python side", () => {
  const folder = mkdtempSync(join(tmpdir(), "donjon-fairness-"));
  after(() => rmSync(folder, { recursive: true, force: true }));

  test("the export verifies: chain, commitment, contributions, every tile draw, signature", async () => {
    for (const subtle of [undefined, null]) { // WebCrypto's hashes, and the fallbacks of a page without it
      const result = await verifyExport(EXPORT, { key: NODE_KEY, subtle });
      assert.equal(result.events, EXPORT.events.length);
      const names = ["format", "hash chain", "scheme", "batches", "seed commitment", "sealed parts", "seat contributions", "tile draws", "signature"];
      assert.deepEqual(result.checks.map((c) => [c.name, c.ok]), names.map((name) => [name, true]));
      assert.equal(result.hashes, subtle === null ? "fallback" : "webcrypto");
    }
    const draws = (await verifyExport(EXPORT)).checks.find((c) => c.name === "tile draws");
    assert.equal(draws.detail, "71 tiles, each the one donjon-draw-1 gives"); // every tile but the start tile
  });

  for (const [name, [tamper, reason, pythonReason]] of Object.entries(TAMPERINGS)) {
    test(`${name} is refused, here and by donjon verify`, async () => {
      const tampered = await tamper(EXPORT);
      const problem = await firstFailure(tampered, { key: NODE_KEY });
      assert.ok(problem?.startsWith(reason), problem);
      const path = join(folder, "tampered.json");
      writeFileSync(path, JSON.stringify(tampered));
      let output = "";
      let status = 0;
      try {
        execFileSync(PYTHON, ["-m", "service", "verify", path, "--key", NODE_KEY], { cwd: REPO, stdio: "pipe" });
      } catch (error) {
        status = error.status;
        output = error.stdout.toString();
      }
      assert.equal(status, 1);
      assert.ok(output.startsWith(`MISMATCH  ${pythonReason.replace("{id}", EXPORT.id)}`), output);
    });
  }

  test("an unsigned file and a file signed over other contents are refused", async () => {
    const { signature, ...unsigned } = EXPORT;
    assert.equal(await firstFailure(unsigned), "signature: the file is not signed");
    const forged = { ...copy(EXPORT), signature: { ...signature, value: toBase64(new Uint8Array(64)) } };
    assert.equal(await firstFailure(forged), "signature: the signature does not match the file's contents");
  });
});
