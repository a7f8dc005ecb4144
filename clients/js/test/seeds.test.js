// Players' seeds by default (issue 22): every seat DonjonClient.takeSeat takes sends a client_seed made
// from crypto.getRandomValues unless the caller gives one, and the reply (and the seat's event) shows
// it was used; against a real server.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { DonjonError, newClientSeed } from "../src/index.js";
import { serveForSuite } from "./support/server.js";
import { assertShape } from "./support/shapes.js";

describe("each seat's own share of the game's seed", () => {
  let client;
  serveForSuite((_server, c) => {
    client = c;
  });

  test("a seat taken with no client_seed given sends a random one, and the reply shows it was used", async () => {
    const sent = [];
    const fetch = client.fetch;
    client.fetch = (url, init) => {
      if (init?.method === "POST" && url.endsWith("/seats")) sent.push(JSON.parse(init.body));
      return fetch(url, init);
    };
    try {
      const { id } = await client.createGame({ game: "castle_panic", seats: 3, bots: { 2: "heuristic" } });
      const first = await client.takeSeat(id, { name: "Ada" });
      const second = await client.takeSeat(id, { name: "Bo" });
      assertShape("Seated", first);
      for (const [taken, body] of [[first, sent[0]], [second, sent[1]]]) {
        assert.match(body.client_seed, /^[0-9a-f]{64}$/);
        assert.equal(taken.seed_contribution, body.client_seed);
        assert.equal(taken.seed_contribution_from, "seat");
      }
      assert.notEqual(sent[0].client_seed, sent[1].client_seed);
      const events = [];
      for await (const event of client.allEvents(id)) events.push(event);
      const seats = events.filter((e) => e.type === "game.seat_taken").map((e) => e.payload);
      assert.deepEqual(seats.map((s) => [s.seat, s.seed_contribution_from]), [[2, "server"], [0, "seat"], [1, "seat"]]);
      assert.deepEqual(seats.slice(1).map((s) => s.seed_contribution), sent.map((b) => b.client_seed));
    } finally {
      client.fetch = fetch;
    }
  });

  test("a caller's own client_seed is sent as it is; null sends none", async () => {
    const { id } = await client.createGame({ game: "carcassonne", seats: 2 });
    const mine = await client.takeSeat(id, { name: "Ada", client_seed: "my-own-dice" });
    assert.deepEqual([mine.seed_contribution, mine.seed_contribution_from], ["my-own-dice", "seat"]);
    const none = await client.takeSeat(id, { name: "Bo", client_seed: null });
    assert.equal(none.seed_contribution_from, "server");
    assert.match(none.seed_contribution, /^[0-9a-f]{64}$/);
  });

  test("newClientSeed is 32 fresh random bytes, and refuses to make one without crypto.getRandomValues", () => {
    const seeds = new Set(Array.from({ length: 100 }, newClientSeed));
    assert.equal(seeds.size, 100);
    for (const seed of seeds) assert.match(seed, /^[0-9a-f]{64}$/);
    const crypto = Object.getOwnPropertyDescriptor(globalThis, "crypto");
    Object.defineProperty(globalThis, "crypto", { value: undefined, configurable: true });
    try {
      assert.throws(newClientSeed, (error) => error instanceof DonjonError && error.code === "no_random");
    } finally {
      Object.defineProperty(globalThis, "crypto", crypto);
    }
  });
});
