// boardgame.io's own server serving the mirror game, for `donjon bench --only peers`.
//
// As boardgame.io is meant to be run: `Server` with its defaults, that is its in-memory storage
// (nothing written to disk) and its SocketIO transport, the lobby API on the same port. The
// mirror game is donjon's `bench/mirror.py` written the boardgame.io way: 2 seats, 9 cells,
// `play(cell)` always legal for both seats at any time, never over. Both seats move whenever
// they like (`ActivePlayers.ALL`), and a move does not need the latest state id
// (`ignoreStaleStateID`), as a donjon command needs no version: each server orders the two
// seats' moves itself. A cell that is not 0-8 is refused, as donjon refuses it.
//
// Usage: node server.mjs PORT. Prints "listening PORT" once it accepts connections.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { Server, Origins } = require("boardgame.io/server");
const { ActivePlayers, INVALID_MOVE } = require("boardgame.io/core");

const CELLS = 9;

export const Mirror = {
  name: "mirror",
  minPlayers: 2,
  maxPlayers: 2,
  setup: () => ({ cells: Array(CELLS).fill(null), moves: [0, 0] }),
  turn: { activePlayers: ActivePlayers.ALL },
  moves: {
    play: {
      move: ({ G, playerID }, cell) => {
        if (!Number.isInteger(cell) || cell < 0 || cell >= CELLS) return INVALID_MOVE;
        G.cells[cell] = Number(playerID);
        G.moves[Number(playerID)] += 1;
      },
      ignoreStaleStateID: true,
    },
  },
};

const port = Number(process.argv[2]);
const server = Server({ games: [Mirror], origins: [Origins.LOCALHOST] });
await server.run(port, () => process.stdout.write(`listening ${port}\n`));
