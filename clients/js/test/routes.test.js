// Every HTTP route of the contract through its DonjonClient method, and nothing a caller gives the
// client dropped: body fields it does not know go to the server, which names them in its 400;
// options only the client sees (a token, query parameters, connect's and send's) are refused by the
// client, naming them. Against a real `donjon serve`.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { DonjonError, playFromLegal, verifyExport } from "../src/index.js";
import { serveForSuite } from "./support/server.js";
import { assertShape } from "./support/shapes.js";
import { seatedGame } from "./support/watch.js";

/** Resolves with the DonjonError `promise` rejects with (fails if it resolves). */
async function refusal(promise) {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DonjonError, `not a DonjonError: ${error}`);
    return error;
  }
  assert.fail("it was not refused");
}

describe("every route, nothing dropped", () => {
  let client;
  let server;
  serveForSuite((s, c) => {
    server = s;
    client = c;
  }, { env: { DONJON_AWAY_MS: "1" } });

  test("a body field the client does not know reaches the server, which names it, as raw HTTP does", async () => {
    const body = { game: "castle", spectatorDelay: { versions: 2 }, undo_: false };
    const error = await refusal(client.createGame(body));
    const raw = await fetch(`${server.url}/games`, { method: "POST", body: JSON.stringify(body) });
    assert.equal(raw.status, 400);
    const { error: expected } = await raw.json();
    assert.deepEqual([error.code, error.status, error.message], [expected.code, 400, expected.message]);
    assert.equal(error.code, "bad_request");
    assert.match(error.message, /'spectatorDelay'/);
    assert.match(error.message, /'undo_'/);
    const { id } = await client.createGame({ game: "castle" });
    const seat = await refusal(client.takeSeat(id, { name: "Ada", clientSeed: "abc" }));
    assert.deepEqual([seat.code, seat.status], ["bad_request", 400]);
    assert.match(seat.message, /'clientSeed'/);
    const rematch = await refusal(client.rematch(id, { token: "t".repeat(43), again: true }));
    assert.deepEqual([rematch.code, rematch.status], ["bad_request", 400]);
    assert.match(rematch.message, /'again'/);
  });

  test("the wire's names are taken as they are, fractions of seconds too", async () => {
    const { id } = await client.createGame({
      game: "castle_panic", seats: 2, clock: { per_move_s: 0.5 }, on_timeout: "bot", undo: false,
      spectator_delay: { seconds: 1.5 },
    });
    const [created] = (await client.events(id, { from: 1, limit: 1 })).events;
    assert.deepEqual(
      [created.payload.clock, created.payload.on_timeout, created.payload.undo, created.payload.spectator_delay],
      [{ per_move_ms: 500, runs: "owing" }, "bot", false, { ms: 1500 }],
    );
  });

  test("options only the client sees are refused by it, naming them, never ignored", async () => {
    const { id, tokens } = await seatedGame(client, "castle_panic", 2);
    const cases = [
      [client.listGames({ statuss: "open" }), /listGames has no option 'statuss'/],
      [client.getGame(id, { tokn: tokens[0] }), /getGame has no option 'tokn'/],
      [client.events(id, { form: 1 }), /events has no option 'form'/],
      [client.state(id, { at: 1, token: tokens[0] }), /state has no option 'token'/],
      [client.allEvents(id, { limitt: 3 }).next(), /allEvents has no option 'limitt'/],
      [client.request("GET", "/healthz", { headers: {} }), /request has no option 'headers'/],
    ];
    for (const [promise, message] of cases) {
      const error = await refusal(promise);
      assert.equal(error.code, "bad_request");
      assert.match(error.message, message);
    }
    assert.throws(() => client.connect(id, { tokn: tokens[0] }), (error) => error.code === "bad_request" && /'tokn'/.test(error.message));
    assert.throws(() => client.connect(id, { reconnect: { delay: 5 } }), /'delay'/);
    const conn = client.connect(id, { token: tokens[0] });
    await conn.ready;
    const move = conn.legal[0];
    const sent = await refusal(conn.send(move, { expected_version: conn.version }));
    assert.deepEqual([sent.code, /send has no option 'expected_version'/.test(sent.message)], ["bad_request", true]);
    const extra = await refusal(conn.send({ ...move, note: "mine" }));
    assert.equal(extra.code, "bad_frame"); // the command as given: the server names the field
    assert.match(extra.message, /'note'/);
    const nulled = await refusal(conn.send({ type: "resign", args: null }));
    assert.equal(nulled.code, "bad_command");
    assert.equal((await conn.send(move)).duplicate, false); // nothing before it was applied
    conn.close();
  });

  test("health, ready, metrics, the two contracts, keys, assets, export, a seat shown away", async () => {
    assert.deepEqual(await client.health(), { status: "ok" });
    assert.deepEqual(await client.ready(), { status: "ready" });
    assert.match(await client.metrics(), /^# HELP donjon_/m);
    assert.match((await client.openapi()).openapi, /^3\.1\./);
    assert.match((await client.asyncapi()).asyncapi, /^3\./);
    const { keys } = await client.keys();
    assert.match(keys[0].public_key, /^[0-9a-f]{64}$/);
    assert.equal(keys[0].algorithm, "ed25519");
    const assets = await client.gameAssets("carcassonne");
    assert.equal(assets.ports.length, 12);
    assert.deepEqual(await client.gameAssets("castle_panic"), { game: "castle_panic" });
    assert.equal((await refusal(client.gameAssets("chess"))).code, "not_found");

    const { id, tokens } = await seatedGame(client, "castle_panic", 1);
    assert.equal((await refusal(client.exportGame(id))).code, "not_finished");
    await new Promise((resolve) => setTimeout(resolve, 50)); // DONJON_AWAY_MS is 1: no socket yet
    const seats = (await client.getGame(id)).seats;
    assert.equal(seats[0].away, true);
    assertShape("Seat", seats[0]);
    const conn = client.connect(id, { token: tokens[0] });
    await playFromLegal(conn);
    conn.close();
    const exported = await client.exportGame(id);
    assert.deepEqual([exported.id, exported.status], [id, "finished"]);
    const report = await verifyExport(exported, { trustedKeys: await client.keys() });
    assert.ok(report.ok, JSON.stringify(report.checks.filter((check) => !check.ok)));
    assert.deepEqual([report.signer, report.verdict], ["pinned", "verifies"]);
    const listed = await client.ledger({ game: id });
    assert.deepEqual([listed.entry.id, listed.entry.position, listed.entry.hash],
      [id, exported.ledger.position, exported.ledger.hash]);
    assert.equal(listed.head.signature.public_key, keys[0].public_key);
    const page = await client.ledger({ from: exported.ledger.position, limit: 1 });
    assert.equal(page.entries[0].id, id);
    assert.equal((await refusal(client.ledger({ limit: 0 }))).code, "bad_request");
  });
});
