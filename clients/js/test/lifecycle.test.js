// The service's lifecycle commands through the client (docs/protocol.md, "The life of a game"):
// resign (a two-player forfeit, a co-op seat taken over by a bot), undo (allowed, refused by the
// policy, turned off), and the rematch route with the connections that learn of the rematch.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { DonjonClient } from "../src/index.js";
import { Proxy } from "./support/proxy.js";
import { rejectsWith } from "./support/refusals.js";
import { serveForSuite } from "./support/server.js";
import { assertShape } from "./support/shapes.js";
import { record, seatedGame, waitFor } from "./support/watch.js";

const UNDO = { type: "undo", args: {} };

/** Every seat's connection and a spectator's, each with what it saw, once all are ready. */
async function connectAll(client, id, tokens, options = {}) {
  const seats = tokens.map((token) => client.connect(id, { token, ...options }));
  const spectator = client.connect(id, options);
  await Promise.all([...seats, spectator].map((conn) => conn.ready));
  return { seats, spectator, seen: [...seats, spectator].map(record) };
}

/** The connections that have applied `version` (an ack's) at least. */
const caughtUp = (conns, version, what) =>
  waitFor(() => conns.every((conn) => conn.version >= version), 10_000, what);

const closeAll = (conns) => conns.forEach((conn) => conn.close());

/** Make a move from legal, and wait until `conn` shows its result. */
async function play(conn, move) {
  const ack = await conn.send(move, { expectedVersion: conn.version });
  await caughtUp([conn], ack.version, `the update of ${move.type}`);
  return ack;
}

describe("lifecycle: resign, undo, rematch", () => {
  let server;
  let client;
  serveForSuite((started, connected) => {
    [server, client] = [started, connected];
  });

  test("resign ends a two-player game: the other seat wins by forfeit", { timeout: 30_000 }, async () => {
    const { id, tokens } = await seatedGame(client, "carcassonne", 2);
    const { seats, spectator, seen } = await connectAll(client, id, tokens, { codec: "msgpack" });
    const events = [];
    spectator.on("change", (detail) => events.push(...detail.events));
    const leaver = seats[1];
    assert.ok(!leaver.legal.some((command) => command.type === "resign"), "resign is never in legal");

    const ack = await leaver.resign({ id: "leave" }); // seat 1 resigns on seat 0's turn: resigning needs none
    assert.deepEqual(ack, { id: "leave", version: ack.version, duplicate: false });
    await caughtUp([...seats, spectator], ack.version, "the forfeit's update");
    for (const conn of [...seats, spectator]) {
      assert.equal(conn.status, "finished");
      assert.deepEqual(conn.view.left, [1]);
      assert.deepEqual(conn.legal, []);
    }
    const left = events.find((event) => event.type === "seat.left");
    assert.deepEqual(left.payload, { seat: 1, reason: "resigned", bot: null });
    assert.equal(left.actor, 1);
    const finished = events.at(-1);
    assert.equal(finished.type, "game.finished");
    assert.equal(finished.version, ack.version);
    assert.deepEqual(finished.payload.summary.winners, [0]);
    assert.deepEqual(finished.payload.summary.forfeit, { seat: 1, reason: "resigned" });
    assert.deepEqual(await leaver.resign({ id: "leave" }), { ...ack, duplicate: true }); // the same id: nothing twice
    await rejectsWith(leaver.resign(), "game_over");
    await rejectsWith(spectator.resign(), "spectator");
    assert.deepEqual(seen.flatMap((s) => s.errors), []);
    closeAll([...seats, spectator]);
  });

  test("resign in a co-op game: a bot takes the seat, the game goes on", { timeout: 30_000 }, async () => {
    const { id, tokens } = await seatedGame(client, "castle_panic", 3);
    const { seats, spectator } = await connectAll(client, id, tokens);
    const ack = await seats[2].resign();
    await caughtUp([seats[2]], ack.version, "the resign's update");
    assert.equal(seats[2].status, "active");
    assert.equal(seats[2].seats[2].bot, "heuristic");
    assert.deepEqual(seats[2].view.left, [2]);
    assert.deepEqual(seats[2].legal, []);
    await rejectsWith(seats[2].resign(), "not_your_turn"); // the seat is the bot's now
    closeAll([...seats, spectator]);
  });

  test("undo takes this seat's last command back, when the policy allows it", { timeout: 30_000 }, async () => {
    const { id, tokens } = await seatedGame(client, "carcassonne", 2); // undo is on by default
    const { seats, spectator, seen } = await connectAll(client, id, tokens);
    const mover = seats.find((conn) => conn.legal.length > 0);
    const waiter = seats.find((conn) => conn !== mover);
    const offered = mover.legal;
    assert.equal(mover.canUndo, false);
    await rejectsWith(mover.undo({ id: "too-soon" }), "undo_refused", { id: "too-soon" }); // nothing since the draw

    await play(mover, offered[0]);
    assert.equal(mover.canUndo, true);
    assert.deepEqual(mover.legal.at(-1), UNDO); // listed last, exactly when allowed
    assert.equal(waiter.canUndo, false);
    await rejectsWith(waiter.undo(), "undo_refused"); // not the waiter's command

    const undone = [];
    mover.on("change", ({ events }) => undone.push(...events.filter((event) => event.type === "move.undone")));
    const reverted = mover.version;
    const ack = await mover.undo();
    await caughtUp([mover], ack.version, "the undo's update");
    assert.deepEqual(mover.legal, offered); // the tile is back in hand
    assert.equal(mover.canUndo, false);
    assert.deepEqual(undone.map((event) => event.payload), [{ seat: mover.seat, from: reverted, to: reverted }]);
    assert.deepEqual(seen.flatMap((s) => s.errors), []);
    closeAll([...seats, spectator]);
  });

  test("undo in a game created with undo off is refused", { timeout: 30_000 }, async () => {
    const { id } = await client.createGame({ game: "carcassonne", seats: 2, undo: false });
    const tokens = [];
    for (const name of ["p0", "p1"]) tokens.push((await client.takeSeat(id, { name })).token);
    const { seats, spectator } = await connectAll(client, id, tokens);
    const mover = seats.find((conn) => conn.legal.length > 0);
    await play(mover, mover.legal[0]);
    assert.equal(mover.canUndo, false);
    await assert.rejects(mover.undo(), (error) => error.code === "undo_refused" && /off/.test(error.message));
    closeAll([...seats, spectator]);
  });

  test("rematch: one linked game, every connection learns its id, seats rotated", { timeout: 60_000 }, async () => {
    const proxy = await new Proxy(server.port).listen();
    try {
      const { id, tokens } = await seatedGame(client, "carcassonne", 2);
      const { seats, spectator } = await connectAll(client, id, tokens);
      // Seat 1 watches through a proxy that will lose the rematch's update: it learns it on reconnect.
      const dropped = new DonjonClient(proxy.url).connect(id, { token: tokens[1], codec: "msgpack" });
      const droppedSeen = record(dropped);
      await dropped.ready;
      const conns = [...seats, spectator, dropped];
      const learned = conns.map(() => []);
      conns.forEach((conn, i) => conn.on("rematch", (detail) => learned[i].push(detail)));

      await rejectsWith(client.rematch(id, { token: tokens[0] }), "not_over", { status: 409 });
      const ack = await seats[0].resign();
      await caughtUp(conns, ack.version, "the end");
      await rejectsWith(client.rematch(id, {}), "unauthorized", { status: 401 });
      proxy.mute();

      const asked = [];
      for (const token of tokens) asked.push(await client.rematch(id, { token }));
      asked.forEach((body) => assertShape("Rematch", body));
      const rematchId = asked[0].id;
      assert.equal(asked[1].id, rematchId, "one rematch per game");
      assert.deepEqual(asked.map((body) => body.seat), [1, 0]); // old seat s sits at (s - 1) mod n

      proxy.cut();
      const linkedAt = ack.version + 1; // game.rematch: the only event after game.finished
      await waitFor(() => conns.every((conn) => conn.rematch !== null), 10_000, "every connection to learn the rematch");
      for (const [i, conn] of conns.entries()) {
        assert.equal(conn.rematch, rematchId);
        assert.equal(conn.view.rematch, rematchId);
        assert.deepEqual(learned[i], [{ id: rematchId, version: linkedAt }], `connection ${i} learned it once`);
      }
      assert.ok(droppedSeen.states.some(({ state }) => state === "reconnecting"), "the proxied connection reconnected");
      assert.deepEqual(droppedSeen.errors, []);
      const late = client.connect(id); // a connection opened afterwards learns it from its snapshot
      const lateLearned = new Promise((resolve) => late.on("rematch", resolve));
      assert.deepEqual(await lateLearned, { id: rematchId, version: linkedAt });

      await rejectsWith(client.takeSeat(rematchId, { name: "intruder" }), "unauthorized", { status: 401 });
      const first = await client.takeSeat(rematchId, { token: tokens[1] }); // the old name by default
      const second = await client.takeSeat(rematchId, { token: tokens[0], name: "p0 again" });
      assert.deepEqual([first.seat, second.seat, second.status], [0, 1, "active"]);
      assert.ok(!tokens.includes(first.token), "a new token");
      const body = await client.getGame(rematchId, { token: first.token });
      assert.deepEqual(body.seats.map((seat) => seat.name), ["p1", "p0 again"]);
      const [created] = (await client.events(rematchId, { from: 1, limit: 1 })).events;
      assert.equal(created.payload.rematch_of, id);
      closeAll([...conns, late]);
    } finally {
      await proxy.close();
    }
  });
});
