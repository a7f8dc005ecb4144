// The server dies mid-game (SIGKILL of its process group: it and its embedded store, nothing
// else) and comes back on the same data dir and port; later it shuts down cleanly (1001) and comes
// back again. The seats and a spectator carry on by themselves and see every version once.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { DonjonClient, playFromLegal } from "../src/index.js";
import { DonjonServer } from "./support/server.js";
import { assertOnceInOrder, logVersions, record, seatedGame, waitFor } from "./support/watch.js";

let server;
before(async () => {
  server = await new DonjonServer().start();
});
after(() => server?.dispose());

test("server killed and restarted, then stopped and restarted, mid-game", { timeout: 180_000 }, async () => {
  const client = new DonjonClient(server.url);
  const { id, tokens } = await seatedGame(client, "castle", 2);
  const retry = { reconnect: { initialDelay: 100, maxDelay: 1000 } };
  const spectator = client.connect(id, { codec: "msgpack", ...retry });
  const watched = record(spectator);
  await spectator.ready;
  const seats = tokens.map((token, seat) => client.connect(id, { token, codec: seat ? "msgpack" : "json", ...retry }));
  const seen = seats.map(record);

  const outages = [];
  const outage = async (how) => {
    outages.push({ how, at: spectator.version });
    await (how === "kill" ? server.kill() : server.stop());
    await new Promise((resolve) => setTimeout(resolve, 300));
    await server.start();
  };
  let plan = [
    [60, "kill"],
    [150, "stop"],
  ];
  let busy = Promise.resolve();
  spectator.on("change", ({ version }) => {
    if (plan.length && version >= plan[0][0]) {
      const [, how] = plan[0];
      plan = plan.slice(1);
      busy = busy.then(() => outage(how));
    }
  });

  await Promise.all(seats.map((conn) => playFromLegal(conn)));
  await busy;
  const final = await client.getGame(id);
  assert.equal(final.status, "finished");
  assert.deepEqual(outages.map(({ how }) => how), ["kill", "stop"]);
  await waitFor(() => spectator.version === final.version, 15_000, "the spectator's last update");
  assertOnceInOrder(watched, await logVersions(client, id));
  const codes = watched.states.filter(({ state }) => state === "reconnecting").map(({ code }) => code);
  assert.ok(codes.includes(1006), `dropped by the kill: ${codes}`);
  assert.ok(codes.includes(1001), `going away on the clean stop: ${codes}`);
  for (const [seat, conn] of seats.entries()) {
    assertOnceInOrder(seen[seat], await logVersions(client, id, tokens[seat]));
    assert.deepEqual(seen[seat].errors, []);
    conn.close();
  }
  assert.deepEqual(watched.errors, []);
  spectator.close();
});
