#!/usr/bin/env node
// Usage: node examples/play.mjs BASE_URL GAME [SEATS]
// Creates a game, takes every seat, plays it to the end from `legal` alone, prints one summary
// line. Exit 0 when the game finished cleanly; 1 on any protocol breach or refused legal move.
import { spawnSync } from "node:child_process";
import { DonjonClient } from "../src/index.js";

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
const tokens = [];
for (let i = 0; i < seats; i++) tokens.push((await client.takeSeat(id, { name: `seat ${i}` })).token);

const breaches = [];
let summary = null;
let breached;
const firstBreach = new Promise((resolve) => (breached = resolve));
const breach = (conn, error) => breaches.push(`seat ${conn.seat}: ${error.code}: ${error.message}`) && breached();
const connections = tokens.map((token) => client.connect(id, { token }));

/** Play one seat: whenever its view offers moves, send one at that version and wait for the next view. */
function playSeat(conn) {
  let busy = false;
  let done;
  const step = async () => {
    if (!busy && conn.status === "finished") done();
    if (busy || conn.status !== "active" || conn.legal.length === 0) return;
    busy = true;
    const at = conn.version;
    const move = conn.legal[Math.floor(Math.random() * conn.legal.length)];
    try {
      await conn.send(move, { expectedVersion: at });
    } catch (error) {
      if (error.code !== "conflict") breach(conn, error); // a move from `legal` may only lose a race
    }
    busy = false;
    if (conn.version > at) step();
  };
  conn.on("change", ({ events }) => {
    summary = events.find((event) => event.type === "game.finished")?.payload.summary ?? summary;
    step();
  });
  conn.on("error", (error) => breach(conn, error));
  conn.ready.then(step, (error) => breach(conn, error));
  return new Promise((resolve) => (done = resolve));
}

await Promise.race([Promise.all(connections.map(playSeat)), firstBreach]);
connections.forEach((conn) => conn.close());
const final = await client.getGame(id);
console.log(`${game} ${id} ${final.status} at version ${final.version}, ${seats} seats, ${Date.now() - started} ms, summary ${JSON.stringify(summary)}`);
for (const breach of breaches) console.error(`breach: ${breach}`);
process.exit(breaches.length === 0 && final.status === "finished" ? 0 : 1);
