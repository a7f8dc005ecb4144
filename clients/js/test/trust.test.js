// Pinning, key ids and downgrades (src/trust.js, through verifyExport; issue 21): a signer is trusted
// only when the caller's keys (a GET /keys body or a list of public keys) list it, a key_id that is not
// sha256(public key)[:16] is a forgery, a key retired before the file was signed is refused, a game
// created since SHA-256 chains and donjon-draw-1 came in may not claim less, and no input makes the
// verifier throw. The files are real exports made by the Python side (test/data), forged here.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { LEGACY, UNPINNED_VERDICT, verifyExport, verifyExportText } from "../src/audit.js";
import { decode } from "../src/msgpack.js";
import { fromBase64 } from "../src/fairness.js";
import { EXPORT_FORMATS, keyIdOf, STRONG_SCHEMES_SINCE, trustedKeyList } from "../src/trust.js";
import { copy, newSigningKey, rechained, signedWith } from "./support/exports.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const load = (name) => JSON.parse(readFileSync(join(HERE, "data", `${name}.json`), "utf8"));
const GAMES = ["carcassonne", "castle", "castle_panic"];

/** The first failed check as "name: detail", or null. */
const failure = (result) => {
  const failed = result.checks.find((c) => !c.ok);
  return failed ? `${failed.name}: ${failed.detail}` : null;
};

const finishedAt = (exp) => decode(fromBase64(exp.events[exp.events.length - 1].body)).ts;

/** A GET /keys body of the v1.3 shape listing `keys` ([key, status, signed_from, signed_until]). */
const keysBody = (keys, legacyGamesBefore = null) => ({
  keys: keys.map(([key, status = "current", from = null, until = null]) => (
    { id: key.id, algorithm: "ed25519", public_key: key.publicKey, status, signed_from: from, signed_until: until })),
  legacy_games_before: legacyGamesBefore,
});

let deployment; // the key the tests' deployment lists
let foreign; // a key nobody lists

before(async () => {
  deployment = await newSigningKey();
  foreign = await newSigningKey();
});

describe("key ids", () => {
  test("a key's id is the first 16 hex digits of sha256 of its raw bytes", () => {
    const fixture = load("draw2-castle");
    assert.equal(keyIdOf(fixture.signature.public_key), fixture.signature.key_id);
    assert.equal(keyIdOf("00".repeat(32)), "66687aadf862bd77");
  });

  test("a genuine file whose key_id names another key is refused", async () => {
    const genuine = load("draw2-carcassonne");
    const forged = { ...genuine, signature: { ...genuine.signature, key_id: "0123456789abcdef" } };
    const result = await verifyExport(forged, { trustedKeys: [genuine.signature.public_key] });
    assert.equal(result.ok, false);
    assert.match(failure(result), /^signature: the key_id "0123456789abcdef" is not sha256\(public key\)\[:16\]/);
  });

  test("a file signed by a foreign key that carries the deployment key's id is refused, pinned or not", async () => {
    const forged = await signedWith(load("draw2-castle"), foreign, deployment.id);
    for (const trustedKeys of [undefined, keysBody([[deployment]])]) {
      const result = await verifyExport(forged, { trustedKeys });
      assert.equal(result.ok, false);
      assert.match(failure(result), /^signature: the key_id "[0-9a-f]{16}" is not sha256/);
    }
  });
});

describe("pinning", () => {
  test("each game's genuine file verifies pinned to a GET /keys body, of today's shape and of v1.3's", async () => {
    for (const game of GAMES) {
      const exp = await signedWith(load(`draw2-${game}`), deployment);
      const old = { keys: [{ id: deployment.id, algorithm: "ed25519", public_key: deployment.publicKey }] };
      for (const trustedKeys of [old, keysBody([[deployment]]), [deployment.publicKey], deployment.publicKey]) {
        const result = await verifyExport(exp, { trustedKeys });
        assert.equal(result.verdict, "verifies", failure(result));
        assert.equal(result.signer, "pinned");
        assert.match(result.checks.at(-1).detail, /one this deployment lists \(current\)/);
      }
    }
  });

  test("without trusted keys the result says plainly that the signer is unpinned", async () => {
    const result = await verifyExport(load("draw2-castle_panic"));
    assert.equal(result.ok, true, failure(result));
    assert.equal(result.signer, "unpinned");
    assert.equal(result.verdict, UNPINNED_VERDICT);
    assert.match(result.checks.at(-1).detail, /signer unpinned: no trusted keys were given/);
  });

  test("a file re-signed by a key the deployment does not list is refused, and never called the deployment's", async () => {
    const forged = await signedWith(rechained(load("draw2-carcassonne"), () => {}), foreign);
    const result = await verifyExport(forged, { trustedKeys: keysBody([[deployment]]) });
    assert.equal(result.ok, false);
    assert.equal(result.signer, "refused");
    assert.equal(failure(result), `signature: signed by key ${foreign.id}, a key this deployment does not list`);
  });

  test("a key retired before the file was signed is refused; one retired after still verifies", async () => {
    const base = load("draw2-castle");
    const end = finishedAt(base);
    const v2 = await signedWith({ ...base, format: "donjon.export/2", exported_at: end + 5000 }, deployment);
    const later = await newSigningKey();
    const retiredAt = (until) => keysBody([[later], [deployment, "retired", end - 86_400_000, until]]);
    const early = await verifyExport(v2, { trustedKeys: retiredAt(end + 4999) });
    assert.match(failure(early), /^signature: signed by key [0-9a-f]{16}, which this deployment retired at .*, before the file was signed/);
    const fine = await verifyExport(v2, { trustedKeys: retiredAt(end + 5000) });
    assert.equal(fine.verdict, "verifies", failure(fine));
    assert.match(fine.checks.at(-1).detail, /\(retired, signed until /);
    // A /1 file names no export time: its game's end bounds it, so a key retired before that cannot have signed it.
    const v1 = await signedWith(base, deployment);
    assert.match(failure(await verifyExport(v1, { trustedKeys: retiredAt(end - 1) })), /which this deployment retired/);
    assert.equal((await verifyExport(v1, { trustedKeys: retiredAt(end) })).ok, true);
  });

  test("format /2 must say when it was exported; unknown formats are refused", async () => {
    const base = load("draw2-castle");
    assert.deepEqual(EXPORT_FORMATS, ["donjon.export/1", "donjon.export/2"]);
    const noTime = await signedWith({ ...base, format: "donjon.export/2" }, deployment);
    assert.match(failure(await verifyExport(noTime, { trustedKeys: [deployment.publicKey] })), /^format: a donjon.export\/2 file names when it was exported/);
    const third = await signedWith({ ...base, format: "donjon.export/3", exported_at: 1 }, deployment);
    assert.match(failure(await verifyExport(third, { trustedKeys: [deployment.publicKey] })), /^format: unknown format "donjon.export\/3"/);
  });

  test("trusted keys that list no usable key trust nothing (never the file's own key)", async () => {
    const exp = await signedWith(load("draw2-castle"), deployment);
    for (const trustedKeys of [{}, { keys: "x" }, [], ["not hex"], 42]) {
      const result = await verifyExport(exp, { trustedKeys });
      assert.equal(result.ok, false, JSON.stringify(trustedKeys));
      assert.equal(result.signer, "refused");
    }
    assert.deepEqual(trustedKeyList({ keys: [{ id: "x", algorithm: "ed25519", public_key: deployment.publicKey.toUpperCase() }] }).keys,
      [{ id: deployment.id, public_key: deployment.publicKey, status: "current", signed_from: null, signed_until: null }]);
  });
});

describe("no downgrades", () => {
  const trusted = () => ({ trustedKeys: keysBody([[deployment]]) });

  test("chain removed, re-chained with SHA-1 and re-signed with the deployment's key: refused (scheme)", async () => {
    for (const game of GAMES) {
      const forged = await signedWith(rechained(load(`draw2-${game}`), (bodies) => {
        delete bodies[0].payload.chain;
      }, "sha1"), deployment);
      const result = await verifyExport(forged, trusted());
      assert.equal(result.ok, false, game);
      assert.match(failure(result), /^scheme: a game created at .*, after SHA-256 chains and donjon-draw-1 came in .*: a downgrade$/);
    }
  });

  test("draw removed: refused (scheme), the draw checks are never skipped into a pass", async () => {
    const forged = await signedWith(rechained(load("draw2-castle_panic"), (bodies) => {
      delete bodies[0].payload.draw;
    }), deployment);
    const result = await verifyExport(forged, trusted());
    assert.equal(result.ok, false);
    assert.ok(failure(result).startsWith("scheme: "), failure(result));
  });

  test("made to look wholly legacy (no draw, SHA-1, no contributions) yet created since: refused", async () => {
    const forged = await signedWith(rechained(load("draw2-castle"), (bodies) => {
      delete bodies[0].payload.draw;
      delete bodies[0].payload.chain;
      for (const body of bodies.filter((b) => b.type === "game.seat_taken")) {
        delete body.payload.seed_contribution;
        delete body.payload.seed_contribution_from;
      }
    }, "sha1"), deployment);
    assert.match(failure(await verifyExport(forged, trusted())), /^scheme: .*: a downgrade$/);
  });

  test("a weaker or unknown scheme name is refused", async () => {
    for (const [field, value] of [["draw", "donjon-draw-0"], ["chain", "sha1"], ["draw", null]]) {
      const forged = await signedWith(rechained(load("draw2-carcassonne"), (bodies) => {
        bodies[0].payload[field] = value;
      }, value === "sha1" ? "sha1" : "sha256"), deployment);
      assert.match(failure(await verifyExport(forged, trusted())), /^scheme: unknown /, `${field} ${value}`);
    }
  });

  test("a game backdated before the deployment's legacy_games_before may not be legacy either", async () => {
    const legacy = load("legacy-castle");
    const since = decode(fromBase64(legacy.events[0].body)).ts;
    assert.ok(since < STRONG_SCHEMES_SINCE);
    const exp = await signedWith(legacy, deployment);
    const open = await verifyExport(exp, { trustedKeys: keysBody([[deployment]], since + 1) });
    assert.equal(open.verdict, LEGACY, failure(open));
    const closed = await verifyExport(exp, { trustedKeys: keysBody([[deployment]], since) });
    assert.match(failure(closed), /^scheme: a game created at .*: a downgrade$/);
  });

  test("a real legacy game verifies only as 'legacy: weaker guarantees'", async () => {
    const result = await verifyExport(await signedWith(load("legacy-castle"), deployment), trusted());
    assert.equal(result.ok, true, failure(result));
    assert.equal(result.verdict, LEGACY);
    assert.ok(result.checks.find((c) => c.name === "scheme").detail.startsWith(`${LEGACY}: `));
  });
});

describe("robust: any input is a verdict, never a throw", () => {
  const genuine = () => load("draw2-castle");
  const inputs = {
    null: null,
    number: 7,
    string: "donjon",
    array: [],
    "format only": { format: "donjon.export/1" },
    "events null": { ...genuine(), events: null },
    "events of nulls": { ...genuine(), events: [null, null] },
    "events of numbers": { ...genuine(), events: [1, 2, 3] },
    "chain a string": { ...genuine(), chain: "x" },
    "signature a number": { ...genuine(), signature: 5 },
    "signature of wrong types": { ...genuine(), signature: { algorithm: "ed25519", key_id: 1, public_key: [], value: {} } },
    "id a number": { ...genuine(), id: 5 },
    "a body a number": (() => { const e = genuine(); e.events[3].body = 12; return e; })(),
    "truncated": (() => { const e = genuine(); e.events = e.events.slice(0, 10); return e; })(),
    "a getter that throws": Object.defineProperty(copy(genuine()), "events", { get() { throw new Error("boom"); } }),
    "deeply nested": { ...genuine(), seed: JSON.parse("[".repeat(2000) + "]".repeat(2000)) },
  };
  for (const [name, input] of Object.entries(inputs)) {
    test(`${name}: refused with a reason`, async () => {
      const result = await verifyExport(input, { trustedKeys: [deployment.publicKey] });
      assert.equal(result.ok, false);
      assert.equal(result.verdict, "does not verify");
      assert.ok(failure(result), JSON.stringify(result.checks));
    });
  }

  test("the text of a file: not JSON, truncated, a key twice", async () => {
    const text = JSON.stringify(genuine());
    for (const bad of ["", "{", text.slice(0, text.length / 2), text.replace('"seed":', '"seed":"00","seed":')]) {
      const result = await verifyExportText(bad, { trustedKeys: [deployment.publicKey] });
      assert.equal(result.ok, false);
      assert.match(failure(result), /^format: not an export's JSON: /);
    }
  });
});

describe("batches", () => {
  test("an event moved into another batch, the chain rewritten and re-signed, is refused (batches)", async () => {
    const forged = await signedWith(rechained(load("draw2-castle"), (bodies) => {
      const at = bodies.findIndex((body, i) => i > 10 && body.command == null && bodies[i + 1]?.command != null);
      [bodies[at], bodies[at + 1]] = [bodies[at + 1], bodies[at]];
      bodies.forEach((body, i) => { body.version = i + 1; });
    }), deployment);
    const result = await verifyExport(forged, { trustedKeys: [deployment.publicKey] });
    assert.match(failure(result), /^batches: event \d+: command id .* inside the batch event \d+ opened, whose command id is /);
  });
});
