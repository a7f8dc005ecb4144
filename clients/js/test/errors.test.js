// Refusals reach the caller as DonjonError with the server's stable code, from routes and frames;
// close codes that are the client's fault end the connection instead of looping; the client's
// pacing keeps it clear of the server's rate limit.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { CLIENT_CODES, DonjonClient } from "../src/index.js";
import { Proxy } from "./support/proxy.js";
import { rejectsWith as refusedWith } from "./support/refusals.js";
import { freePort, DonjonServer, serveForSuite } from "./support/server.js";
import { record, seatedGame, waitFor } from "./support/watch.js";

/** A refusal as the shared check has it, with a message for people too. */
async function rejectsWith(promise, code, extra = {}) {
  const error = await refusedWith(promise, code, extra);
  assert.ok(error.message.length > 0);
}

async function errorCount(server, code) {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith("donjon_ws_errors_total{") && l.includes(`code="${code}"`));
  assert.ok(line, `no donjon_ws_errors_total series for ${code}`);
  return Number(line.split(" ").at(-1));
}

describe("errors", () => {
  let server;
  let client;
  serveForSuite((started, connected) => {
    [server, client] = [started, connected];
  });

  test("HTTP refusals carry code and status", { timeout: 30_000 }, async () => {
    await rejectsWith(client.createGame({ game: "chess" }), "unknown_game", { status: 400 });
    await rejectsWith(client.createGame({ game: "castle", seats: 9 }), "bad_options", { status: 400 });
    await rejectsWith(client.getGame("no-such-game"), "not_found", { status: 404 });
    const { id, tokens } = await seatedGame(client, "castle", 2);
    await rejectsWith(client.takeSeat(id, { name: "late" }), "game_full", { status: 409 });
    await rejectsWith(client.getGame(id, { token: "x".repeat(43) }), "unauthorized", { status: 401 });
    await rejectsWith(client.state(id, { at: 10_000 }), "bad_request", { status: 400 });
    await rejectsWith(client.listGames({ status: "lost" }), "bad_request", { status: 400 });
    assert.equal((await client.getGame(id, { token: tokens[1] })).seat, 1);
    const nowhere = new DonjonClient(`http://127.0.0.1:${await freePort()}`);
    await rejectsWith(nowhere.catalog(), CLIENT_CODES.NETWORK);
  });

  test("commands refused: typed, with the command's id", { timeout: 30_000 }, async () => {
    const { id, tokens } = await seatedGame(client, "carcassonne", 2);
    const seats = tokens.map((token) => client.connect(id, { token }));
    const spectator = client.connect(id);
    await Promise.all([...seats, spectator].map((conn) => conn.ready));
    const mover = seats.find((conn) => conn.legal.length > 0);
    const waiter = seats.find((conn) => conn !== mover);
    const move = mover.legal[0];
    await rejectsWith(mover.send({ type: "frobnicate" }, { id: "c-1" }), "unknown_command", { id: "c-1" });
    await rejectsWith(mover.send({ type: move.type, args: { nonsense: [] } }), "bad_command");
    await rejectsWith(waiter.send(move, { id: "c-2" }), "not_your_turn", { id: "c-2" });
    await rejectsWith(spectator.send(move), "spectator");
    await rejectsWith(mover.send(move, { expectedVersion: mover.version - 1 }), "conflict");
    const big = { type: move.type, args: { blob: "x".repeat(70_000) } };
    await rejectsWith(mover.send(big, { id: "c-3" }), "frame_too_large", { id: "c-3" });
    const ack = await mover.send(move, { id: "c-4", expectedVersion: mover.version });
    assert.deepEqual(Object.keys(ack).sort(), ["duplicate", "id", "version"]);
    assert.equal(ack.duplicate, false);
    const again = await mover.send(move, { id: "c-4" });
    assert.deepEqual(again, { ...ack, duplicate: true });
    for (const conn of [...seats, spectator]) {
      assert.equal(conn.state, "open");
      conn.close();
    }
    await rejectsWith(mover.send(move), CLIENT_CODES.CLOSED);
  });

  test("a bad token: ready rejects unauthorized, no reconnect loop", { timeout: 30_000 }, async () => {
    const { id } = await seatedGame(client, "castle_panic", 1);
    const conn = client.connect(id, { token: "not-a-token" });
    const seen = record(conn);
    await rejectsWith(conn.ready, "unauthorized");
    assert.equal(conn.state, "closed");
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(!seen.states.some(({ state }) => state === "reconnecting"), JSON.stringify(seen.states));
  });

  test("a game that does not exist: ready rejects not_found, no reconnect loop", { timeout: 30_000 }, async () => {
    const conn = client.connect("no-such-game", { reconnect: { initialDelay: 50, maxDelay: 100 } });
    await rejectsWith(conn.ready, "not_found");
    assert.equal(conn.state, "closed");
  });

  test("1009 (a frame far too large) ends the connection instead of looping", { timeout: 30_000 }, async () => {
    const { id, tokens } = await seatedGame(client, "castle_panic", 1);
    const conn = client.connect(id, { token: tokens[0], maxFrame: Infinity });
    const seen = record(conn);
    await conn.ready;
    const huge = { type: conn.legal[0].type, args: { blob: "x".repeat(300_000) } };
    await rejectsWith(conn.send(huge, { id: "huge" }), CLIENT_CODES.CLOSED, { closeCode: 1009, id: "huge" });
    assert.equal(conn.state, "closed");
    assert.equal(seen.errors.at(-1).closeCode, 1009);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(!seen.states.some(({ state }) => state === "reconnecting"), JSON.stringify(seen.states));
  });

  test("paced: 120 commands as fast as the API takes them, no rate_limited", { timeout: 60_000 }, async () => {
    const before = await errorCount(server, "rate_limited");
    const { id, tokens } = await seatedGame(client, "castle_panic", 1);
    const conn = client.connect(id, { token: tokens[0] });
    await conn.ready;
    const sent = Array.from({ length: 120 }, (_, i) => conn.send({ type: "frobnicate" }, { id: `paced-${i}` }));
    const outcomes = await Promise.allSettled(sent);
    assert.deepEqual(new Set(outcomes.map((outcome) => outcome.reason?.code)), new Set(["unknown_command"]));
    assert.equal(await errorCount(server, "rate_limited"), before);
    conn.close();
  });
});

describe("flooding", () => {
  // A server that gives a socket one frame and no refill, so the 100th frame over the limit (and
  // the close, 1008) comes at a known frame, with nothing of the client's still unread behind it
  // (unread bytes would turn the server's close into a reset, which the client rightly retries).
  // Only frames sent before the answer to the previous one count, so the flood goes through a
  // proxy that hands it to the server in one write: the first frame is free (nothing was
  // waiting), the second takes the one token, the next 99 are limited and the 102nd closes the socket.
  let server;
  let proxy;
  before(async () => {
    server = await new DonjonServer({ env: { DONJON_WS_RATE: "0.001", DONJON_WS_BURST: "1" } }).start();
    proxy = await new Proxy(server.port).listen();
  });
  after(async () => {
    await proxy?.close();
    await server?.dispose();
  });

  test("1008 (flooding, with pacing turned off) ends the connection instead of looping", { timeout: 30_000 }, async () => {
    const client = new DonjonClient(proxy.url);
    const { id, tokens } = await seatedGame(client, "castle_panic", 1);
    const conn = client.connect(id, { token: tokens[0], rate: 1e6, burst: 1e6, maxResends: 0 });
    const seen = record(conn);
    await conn.ready;
    proxy.hold();
    const sent = Array.from({ length: 102 }, (_, i) => conn.send({ type: "frobnicate" }, { id: `flood-${i}` }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    proxy.release();
    const outcomes = await Promise.allSettled(sent);
    const codes = outcomes.map((outcome) => outcome.reason?.code);
    assert.deepEqual(codes, [
      ...Array(2).fill("unknown_command"),
      ...Array(99).fill("rate_limited"),
      CLIENT_CODES.CLOSED,
    ]);
    await waitFor(() => conn.state === "closed", 5000, "the connection to close");
    assert.equal(seen.errors.at(-1).closeCode, 1008);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(!seen.states.some(({ state }) => state === "reconnecting"), JSON.stringify(seen.states));
  });
});
