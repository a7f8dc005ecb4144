// Connections dropped the way networks drop them (a TCP proxy resets them), mid-game: the client
// reconnects by itself with `since`, loses nothing, applies nothing twice, and a command whose ack
// was lost is sent again under its id and answered as a duplicate.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { DonjonClient, playFromLegal } from "../src/index.js";
import { Proxy } from "./support/proxy.js";
import { DonjonServer } from "./support/server.js";
import { assertOnceInOrder, logVersions, record, seatedGame, waitFor } from "./support/watch.js";

describe("reconnect", () => {
  let server;
  let proxy;
  let direct;
  let viaProxy;
  before(async () => {
    server = await new DonjonServer().start();
    proxy = await new Proxy(server.port).listen();
    direct = new DonjonClient(server.url);
    viaProxy = new DonjonClient(proxy.url);
  });
  after(async () => {
    await proxy?.close();
    await server?.dispose();
  });

  test("connections cut three times mid-game: nothing lost, nothing twice", { timeout: 120_000 }, async () => {
    const { id, tokens } = await seatedGame(direct, "carcassonne", 2);
    const fast = { reconnect: { initialDelay: 50, maxDelay: 500 } };
    const spectator = viaProxy.connect(id, fast);
    const watched = record(spectator);
    const seats = tokens.map((token) => viaProxy.connect(id, { token, ...fast }));
    const seen = seats.map(record);
    const cutAt = [40, 90, 150];
    const cuts = [];
    spectator.on("change", ({ version }) => {
      if (cutAt.length && version >= cutAt[0]) {
        cutAt.shift();
        cuts.push(version);
        proxy.cut();
      }
    });
    await Promise.all(seats.map((conn) => playFromLegal(conn)));
    const final = await direct.getGame(id);
    assert.equal(final.status, "finished");
    await waitFor(() => spectator.version === final.version, 10_000, "the spectator's last update");
    assert.equal(cuts.length, 3, `cut at ${cuts}`);
    assertOnceInOrder(watched, await logVersions(direct, id));
    for (const [seat, conn] of seats.entries()) {
      assertOnceInOrder(seen[seat], await logVersions(direct, id, tokens[seat]));
      assert.deepEqual(seen[seat].errors, []);
      assert.ok(seen[seat].states.some(({ state }) => state === "reconnecting"), "the seat reconnected");
      conn.close();
    }
    const reconnects = watched.states.filter(({ state, code }) => state === "reconnecting" && code === 1006);
    assert.equal(reconnects.length, 3, JSON.stringify(watched.states));
    assert.deepEqual(watched.errors, []);
    spectator.close();
  });

  test("an ack lost with the connection: resent with the same id, answered duplicate", { timeout: 60_000 }, async () => {
    const { id, tokens } = await seatedGame(direct, "castle_panic", 1);
    const conn = viaProxy.connect(id, { token: tokens[0], reconnect: { initialDelay: 50, maxDelay: 500 } });
    const seen = record(conn);
    await conn.ready;
    const at = conn.version;
    proxy.mute(); // the server gets the command and applies it; its ack and update never arrive
    const acked = conn.send(conn.legal[0], { expectedVersion: at, id: "lost-ack-1" });
    await waitFor(async () => (await direct.getGame(id)).version > at, 10_000, "the command to be applied");
    assert.equal(conn.version, at, "nothing reached the client while muted");
    proxy.cut();
    const ack = await acked;
    const applied = (await direct.events(id, { from: at + 1, token: tokens[0] })).events;
    assert.equal(ack.id, "lost-ack-1");
    assert.equal(ack.duplicate, true);
    assert.equal(ack.version, applied.at(-1).version);
    await waitFor(() => conn.version >= ack.version, 10_000, "the update after the reconnect");
    assert.deepEqual(seen.versions, [at, conn.version], "the snapshot, then one update with what was missed");
    assertOnceInOrder(seen, await logVersions(direct, id, tokens[0]));
    assert.deepEqual(seen.errors, []);
    conn.close();
  });
});
