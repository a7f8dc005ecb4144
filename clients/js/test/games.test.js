// Whole games of every game the service serves, played by seats from `legal` alone, watched by a
// spectator who must see every version once and in order; and examples/play.mjs for each game.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, test } from "node:test";
import { promisify } from "node:util";

import { playFromLegal } from "../src/index.js";
import { serveForSuite } from "./support/server.js";
import { assertFrame, assertShape } from "./support/shapes.js";
import { assertOnceInOrder, logVersions, record, seatedGame, waitFor } from "./support/watch.js";

const run = promisify(execFile);
const GAMES = [
  ["carcassonne", 3, "json"],
  ["castle", 2, "msgpack"],
  ["castle_panic", 4, "json"],
];

describe("whole games from legal", () => {
  let server;
  let client;
  serveForSuite((started, connected) => {
    [server, client] = [started, connected];
  });

  for (const [game, seats, codec] of GAMES) {
    test(`${game}, ${seats} seats over ${codec}, and a spectator`, { timeout: 120_000 }, async () => {
      const { id, tokens } = await seatedGame(client, game, seats);
      const spectator = client.connect(id, { codec });
      const watched = record(spectator);
      spectator.on("change", ({ frame }) => assertFrame(frame));
      await spectator.ready;
      const seatsPlaying = tokens.map((token) => client.connect(id, { token, codec }));
      const seen = seatsPlaying.map(record);
      await Promise.all(seatsPlaying.map((conn) => playFromLegal(conn)));

      const final = await client.getGame(id);
      assertShape("Game", final);
      assert.equal(final.status, "finished");
      await waitFor(() => spectator.version === final.version, 10_000, "the spectator's last update");
      assert.equal(spectator.status, "finished");
      assert.deepEqual(spectator.legal, []);
      assertOnceInOrder(watched, await logVersions(client, id));
      for (const [seat, conn] of seatsPlaying.entries()) {
        assert.equal(conn.seat, seat);
        assertOnceInOrder(seen[seat], await logVersions(client, id, tokens[seat]));
        assert.deepEqual(seen[seat].errors, []);
        conn.close();
      }
      assert.deepEqual(watched.errors, []);
      spectator.close();
    });
  }

  for (const [game, seats] of GAMES) {
    test(`examples/play.mjs ${game} ${seats}`, { timeout: 120_000 }, async () => {
      const example = new URL("../examples/play.mjs", import.meta.url).pathname;
      const { stdout } = await run(process.execPath, [example, server.url, game, String(seats)], { timeout: 110_000 });
      const lines = stdout.trim().split("\n");
      assert.equal(lines.length, 1, stdout);
      assert.match(lines[0], new RegExp(`^${game} \\w+: finished at version \\d+, ${seats} seats`));
    });
  }
});
