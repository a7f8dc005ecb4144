// The load on boardgame.io's server for `donjon bench --only peers`: the same load as donjon's
// driver (bench/mirror.py) puts on donjon, and as cheap a client as it.
//
// Each game is created and both seats joined through the lobby API (so every move carries the
// seat's credentials, as a deployed game's do); then every seat and spectator is a websocket
// speaking socket.io's frames by hand (engine.io v4: "0" open, "40/mirror," namespace, "2"/"3"
// ping/pong, "42/mirror,[event, ...args]" events), the same frames boardgame.io's own client
// sends, without its reducer: like donjon's driver, it sends commands and reads what comes back.
// A seat sends its next `play` as soon as an update shows its previous one counted (its own
// counter in G.moves: boardgame.io has no ack); a spectator only counts the updates it is sent.
//
// Usage: node driver.mjs '{"port": P, "games": G, "spectators": S, "warmup": s, "window": s}'.
// Prints one JSON line: the window's start and end on the monotonic clock (seconds, the clock of
// Python's perf_counter on Linux), the moves accepted in it, and whether every spectator was
// sent every update.

import WebSocket from "ws";

const { port, games, spectators, warmup, window: seconds } = JSON.parse(process.argv[2]);
const BASE = `http://127.0.0.1:${port}`;
const SOCKET = `ws://127.0.0.1:${port}/socket.io/?EIO=4&transport=websocket`;
const NAMESPACE = "/mirror";
const EVENT = `42${NAMESPACE},`;
const UPDATE = Buffer.from(`${EVENT}["update"`);
const SYNC = Buffer.from(`${EVENT}["sync"`);
const MOVES = Buffer.from('"moves":[');
const STATE_ID = Buffer.from('"_stateID":');
const CELLS = 9;
const CONNECTING_AT_ONCE = 50;

const now = () => Number(process.hrtime.bigint()) / 1e9;
const sleep = (s) => new Promise((resolve) => setTimeout(resolve, s * 1000));
const startsWith = (data, prefix) => data.length >= prefix.length && prefix.compare(data, 0, prefix.length) === 0;

async function post(path, body) {
  const response = await fetch(BASE + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** The integers in `data` right after the first `marker`, up to the first byte that is neither a
 * digit nor a comma ('"moves":[3,4]' -> [3, 4]), read from the bytes without parsing the JSON. */
function integersAfter(data, marker) {
  const values = [0];
  for (let at = data.indexOf(marker) + marker.length; ; at += 1) {
    const byte = data[at];
    if (byte >= 48 && byte <= 57) values[values.length - 1] = values[values.length - 1] * 10 + byte - 48;
    else if (byte === 44) values.push(0);
    else return values;
  }
}

/** A socket.io client on game `matchID` as `playerID` (null: a spectator), synced. */
function join(matchID, playerID, credentials, onUpdate) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(SOCKET, { perMessageDeflate: false });
    let synced = false;
    ws.on("error", reject);
    ws.on("message", (data) => {
      if (startsWith(data, UPDATE)) return onUpdate(data);
      const text = data.toString();
      if (text === "2") ws.send("3");
      else if (text.startsWith("0")) ws.send(`40${NAMESPACE},`);
      else if (text.startsWith(`40${NAMESPACE},`)) {
        ws.send(`${EVENT}${JSON.stringify(["sync", matchID, playerID, credentials, 2])}`);
      } else if (!synced && startsWith(data, SYNC)) {
        synced = true;
        resolve(ws);
      }
    });
  });
}

class Seat {
  constructor(game, seat, credentials) {
    this.game = game;
    this.seat = seat;
    this.credentials = credentials;
    this.sent = 0;
    this.acked = 0;
    this.stateID = 0;
    this.running = false;
  }

  async connect() {
    this.ws = await join(this.game.matchID, String(this.seat), this.credentials, (data) => this.onUpdate(data));
  }

  send() {
    const action = { type: "MAKE_MOVE", payload: { type: "play", args: [this.sent % CELLS], playerID: String(this.seat), credentials: this.credentials } };
    this.sent += 1;
    this.ws.send(`${EVENT}${JSON.stringify(["update", action, this.stateID, this.game.matchID, String(this.seat)])}`);
  }

  onUpdate(data) {
    const counted = integersAfter(data, MOVES)[this.seat];
    if (counted <= this.acked) return;  // the other seat's move
    this.acked = counted;
    this.stateID = integersAfter(data, STATE_ID)[0];
    if (this.running && this.acked >= this.sent) this.send();
  }
}

class Spectator {
  constructor(game) {
    this.game = game;
    this.updates = 0;
  }

  async connect() {
    this.ws = await join(this.game.matchID, null, undefined, () => {
      this.updates += 1;
    });
  }
}

async function inBatches(items, connect) {
  for (let start = 0; start < items.length; start += CONNECTING_AT_ONCE) {
    await Promise.all(items.slice(start, start + CONNECTING_AT_ONCE).map(connect));
  }
}

async function until(condition, limit) {
  const deadline = now() + limit;
  while (!condition() && now() < deadline) await sleep(0.02);
  return condition();
}

const tables = [];
for (let index = 0; index < games; index += 1) {
  const { matchID } = await post("/games/mirror/create", { numPlayers: 2 });
  const game = { matchID, seats: [], spectators: [] };
  for (const seat of [0, 1]) {
    const { playerCredentials } = await post(`/games/mirror/${matchID}/join`, { playerID: String(seat), playerName: `p${seat}` });
    game.seats.push(new Seat(game, seat, playerCredentials));
  }
  for (let s = 0; s < spectators; s += 1) game.spectators.push(new Spectator(game));
  tables.push(game);
}
const seats = tables.flatMap((game) => game.seats);
const watchers = tables.flatMap((game) => game.spectators);
await inBatches(seats, (seat) => seat.connect());
await inBatches(watchers, (spectator) => spectator.connect());

const acked = () => seats.reduce((total, seat) => total + seat.acked, 0);
for (const seat of seats) {
  seat.running = true;
  seat.send();
}
await sleep(warmup);
const t0 = now();
const before = acked();
await sleep(seconds);
const t1 = now();
const moves = acked() - before;
for (const seat of seats) seat.running = false;
const settled = await until(() => seats.every((seat) => seat.acked >= seat.sent), 10);
const total = (game) => game.seats[0].acked + game.seats[1].acked;
const followed = await until(() => watchers.every((spectator) => spectator.updates >= total(spectator.game)), 15);
const expected = watchers.reduce((sum, spectator) => sum + total(spectator.game), 0);
const received = watchers.reduce((sum, spectator) => sum + Math.min(spectator.updates, total(spectator.game)), 0);
process.stdout.write(
  JSON.stringify({ t0, t1, moves, per_s: moves / (t1 - t0), settled, followed, updates_expected: expected, updates_received: received, frames: received }) + "\n",
);
for (const client of [...seats, ...watchers]) client.ws.terminate();
process.exit(0);
