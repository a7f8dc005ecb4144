#!/usr/bin/env node
// Usage: node examples/play.mjs BASE_URL GAME [SEATS]
// Creates a game, takes every seat, plays it to the end from `legal` alone, prints one summary
// line. Exit 0 when the game finished cleanly; 1 on any protocol breach or refused legal move.
import { spawnSync } from "node:child_process";
import { DonjonClient, playFromLegal } from "../src/index.js";

if (typeof WebSocket === "undefined") {
  // Node 20 keeps its WebSocket behind a flag; Node 22+ and browsers have it.
  const run = spawnSync(process.execPath, ["--experimental-websocket", ...process.argv.slice(1)], { stdio: "inherit" });
  process.exit(run.status ?? 1);
}

const [baseUrl, game, seatsArg] = process.argv.slice(2);
if (!baseUrl || !game) {
  console.error("usage: play.mjs BASE_URL GAME [SEATS]");
  process.exit(2);
}
const started = Date.now();
const client = new DonjonClient(baseUrl);
const entry = (await client.catalog()).games.find((g) => g.id === game);
const seats = Number(seatsArg ?? entry?.min_seats ?? 1);
const { id } = await client.createGame({ game, seats });
const connections = [];
for (let i = 0; i < seats; i++) {
  const { token } = await client.takeSeat(id, { name: `seat ${i}` });
  connections.push(client.connect(id, { token }));
}
let summary = null;
connections[0].on("change", ({ events }) => {
  summary = events.find((event) => event.type === "game.finished")?.payload.summary ?? summary;
});

let failure = null;
try {
  await Promise.all(connections.map((conn) => playFromLegal(conn)));
} catch (error) {
  failure = error; // a protocol breach: an error frame, or a legal move refused for another reason than a race
}
connections.forEach((conn) => conn.close());
const { status, version } = await client.getGame(id);
const took = Date.now() - started;
console.log(`${game} ${id}: ${status} at version ${version}, ${seats} seats, ${took} ms, summary ${JSON.stringify(summary)}`);
if (failure) console.error(`protocol breach: ${failure.code}: ${failure.message}`);
process.exit(failure === null && status === "finished" ? 0 : 1);
