// The lobby routes through DonjonClient, against a real server.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { playFromLegal } from "../src/index.js";
import { serveForSuite } from "./support/server.js";
import { assertShape } from "./support/shapes.js";
import { seatedGame } from "./support/watch.js";

describe("lobby routes", () => {
  let client;
  serveForSuite((_server, c) => {
    client = c;
  }, { clientPath: "/" }); // a trailing slash is fine

  test("catalog, create with options and bots, seats, list, get", { timeout: 30_000 }, async () => {
    const { games } = await client.catalog();
    assert.deepEqual(games.map((g) => g.id), ["carcassonne", "castle", "castle_panic"]);
    games.forEach((entry) => assertShape("CatalogEntry", entry));

    const created = await client.createGame({
      game: "carcassonne",
      seats: 3,
      options: { inns_cathedrals: true },
      bots: { 2: "random" },
    });
    assert.match(created.id, /^\w+$/);
    const first = await client.takeSeat(created.id, { name: "Ada" });
    assert.deepEqual([first.seat, first.status], [0, "open"]);
    assertShape("Seated", first);
    assert.equal(first.token.length, 43);
    const open = await client.listGames({ status: "open", limit: 200 });
    const entry = open.games.find((g) => g.id === created.id);
    assertShape("LobbyEntry", entry);
    assert.deepEqual(entry.names, ["Ada", null, "random bot"]);
    assert.deepEqual(entry.bots, [null, null, "random"]);
    const second = await client.takeSeat(created.id, { name: "Bo" });
    assert.deepEqual([second.seat, second.status], [1, "active"]);

    const spectatorView = await client.getGame(created.id);
    assertShape("Game", spectatorView);
    assert.equal(spectatorView.seat, null);
    assert.deepEqual(spectatorView.view.legal, []);
    const seatView = await client.getGame(created.id, { token: second.token });
    assert.equal(seatView.seat, 1);
    assert.equal(seatView.seats[2].bot, "random");
    const active = await client.listGames({ status: "active", limit: 1, offset: 0 });
    assert.equal(active.limit, 1);
    assert.ok(active.games.length <= 1);
  });

  test("events page by page, allEvents, state at a version", { timeout: 60_000 }, async () => {
    const { id, tokens } = await seatedGame(client, "castle_panic", 1);
    const conn = client.connect(id, { token: tokens[0] });
    await playFromLegal(conn);
    conn.close();
    const { version } = await client.getGame(id);

    const page = await client.events(id, { from: 1, limit: 10 });
    assertShape("EventsPage", page);
    assert.equal(page.version, version);
    assert.deepEqual(page.events.map((e) => e.version), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal(page.next, 11);
    assert.deepEqual(Object.keys(page.events[0]).sort(), ["actor", "payload", "ts", "type", "version"]);

    const all = [];
    for await (const event of client.allEvents(id, { limit: 7, token: tokens[0] })) all.push(event.version);
    assert.deepEqual(all, Array.from({ length: version }, (_, i) => i + 1));

    const at5 = await client.state(id, { at: 5 });
    assertShape("State", at5);
    assert.equal(at5.version, 5);
    assert.deepEqual(at5.view.legal, []);
    const now = await client.state(id);
    assert.equal(now.version, version);
    assert.equal(now.status, "finished");
  });
});
