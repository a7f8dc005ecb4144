// Sealed at rest (docs/fairness.md): the AES-256-GCM of pages without WebCrypto (src/aesgcm.js) opens
// what OpenSSL (Python's cryptography) and WebCrypto seal, and refuses what they would refuse; the
// verifier opens the sealed parts of an export with the revealed seed's hiding key, with WebCrypto
// and without, and an export of a game recorded before sealing still verifies.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { aesGcmOpen } from "../src/aesgcm.js";
import { HIDDEN, verifyExport } from "../src/audit.js";
import { fromBase64, fromHex, hmacSha256, toHex } from "../src/fairness.js";
import { decode } from "../src/msgpack.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const load = (name) => JSON.parse(readFileSync(join(HERE, "data", name), "utf8"));
const SEALED = load("carcassonne-export.json");
const UNSEALED = load("carcassonne-export-unsealed.json");
const encoder = new TextEncoder();
const KEY = Uint8Array.from({ length: 32 }, (_, i) => i);
const NONCE = Uint8Array.from({ length: 12 }, (_, i) => 100 + i);

describe("AES-256-GCM without WebCrypto", () => {
  test("the test vector of docs/fairness.md opens, here and with WebCrypto", async () => {
    const key = hmacSha256(new Uint8Array(32), encoder.encode(HIDDEN));
    assert.equal(toHex(key), "8f40ba255e43643204154482daf830bf25a6ca08b8da509a1061788ad671e935");
    const part = fromHex(
      "000000000000000000000000d3ec561e1b50e8e54eacde9f24738a0dc67ed3c7a9582d03279976e7f267b5fa92953c59d360b4b2e30fd0ca6a4ed0dff91dae3a9ba34fe5fb693898889101",
    );
    const bound = encoder.encode("donjon-hidden-1\0g1\x007\0drew");
    const expected = { payload: { seat: 0, card: 3 }, command: { type: "draw", args: {} } };
    assert.deepEqual(decode(aesGcmOpen(key, part.subarray(0, 12), part.subarray(12), bound)), expected);
    const imported = await crypto.subtle.importKey("raw", key, "AES-GCM", false, ["decrypt"]);
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: part.subarray(0, 12), additionalData: bound }, imported, part.subarray(12));
    assert.deepEqual(decode(new Uint8Array(plain)), expected);
    const doc = readFileSync(join(HERE, "..", "..", "..", "docs", "fairness.md"), "utf8");
    assert.ok(doc.includes(toHex(key)) && doc.includes(toHex(part)));
  });

  test("it opens what Python's cryptography (OpenSSL) sealed", () => {
    const bound = encoder.encode("donjon-hidden-1\0g1\x007\0moved");
    const sealed = fromHex(
      "3c73bb460a8c37f25b067f98bb171edd2da4266be54c9604c2bfd864db979068f69034a53f32f76b93945611d3feda473dcd267b07a9e432d56d118560",
    );
    assert.equal(new TextDecoder().decode(aesGcmOpen(KEY, NONCE, sealed, bound)), "the sealed part of an event, 45 bytes long...");
    assert.equal(aesGcmOpen(KEY, NONCE, fromHex("609bd50f6ad76df665f048ba8c5fd706"), new Uint8Array(0)).length, 0);
  });

  test("it opens what WebCrypto sealed, of every length around the block size, and refuses any change", async () => {
    const subtle = globalThis.crypto.subtle;
    for (const length of [0, 1, 15, 16, 17, 31, 32, 33, 100, 1000]) {
      const key = crypto.getRandomValues(new Uint8Array(32));
      const nonce = crypto.getRandomValues(new Uint8Array(12));
      const plaintext = crypto.getRandomValues(new Uint8Array(length));
      const bound = crypto.getRandomValues(new Uint8Array(length % 40));
      const imported = await subtle.importKey("raw", key, "AES-GCM", false, ["encrypt"]);
      const sealed = new Uint8Array(await subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: bound }, imported, plaintext));
      assert.equal(toHex(aesGcmOpen(key, nonce, sealed, bound)), toHex(plaintext), `length ${length}`);
      const flipped = sealed.slice();
      flipped[length % sealed.length] ^= 1;
      assert.throws(() => aesGcmOpen(key, nonce, flipped, bound), /tag does not match/);
      assert.throws(() => aesGcmOpen(key, nonce, sealed, encoder.encode("elsewhere")), /tag does not match/);
    }
  });
});

/** The decoded bodies of an export's events. */
function bodies(exported) {
  return exported.events.map((event) => decode(fromBase64(event.body)));
}

describe("the verifier opens the sealed parts of an export", () => {
  test("an export of a game that seals has sealed parts: every command but the seats'", () => {
    const all = bodies(SEALED);
    assert.equal(all[0].payload.hidden, HIDDEN);
    const started = all.find((body) => body.type === "game_started");
    assert.ok(started.sealed === undefined && started.payload.tile_order === null); // nothing scripted: nothing to hide
    for (const body of all.filter((b) => b.command != null)) {
      if (body.type === "game.created" || body.type === "game.seat_taken") {
        assert.ok(["create_game", "take_seat"].includes(body.command.type), JSON.stringify(body.command));
      } else {
        assert.ok(JSON.stringify(body.command) === "{}" && body.sealed instanceof Uint8Array, `version ${body.version}`);
      }
    }
  });

  for (const subtle of [undefined, null]) {
    test(`it verifies ${subtle === null ? "without WebCrypto's AES-GCM" : "with WebCrypto"}, every part opened`, async () => {
      const result = await verifyExport(SEALED, { key: SEALED.signature.public_key, subtle });
      assert.ok(result.ok, JSON.stringify(result.checks));
      const sealed = result.checks.find((c) => c.name === "sealed parts");
      assert.match(sealed.detail, /^\d+ sealed parts, each opened with the revealed seed's hiding key/);
      const opened = result.bodies.filter((b) => b.command != null && b.type !== "game.seat_taken" && b.type !== "game.created");
      assert.ok(opened.length > 60 && opened.every((b) => typeof b.command.type === "string"), "every command is back");
      assert.ok(result.bodies.every((b) => b.sealed === undefined));
    });
  }

  test("a game recorded before sealing verifies as before, with no sealed parts", async () => {
    const result = await verifyExport(UNSEALED, { key: UNSEALED.signature.public_key });
    assert.ok(result.ok, JSON.stringify(result.checks));
    assert.equal(result.checks.find((c) => c.name === "sealed parts").detail, "no sealed parts");
  });
});
