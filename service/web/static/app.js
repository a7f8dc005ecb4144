// The router: "/" is the lobby, "/app/games/{id}" a game's page (with "?at=N": its replay at version N;
// "?view=stream": the streamer's view).

import { DonjonClient } from "../client/index.js";
import { showLobby } from "./lobby.js";
import { showGame } from "./game.js";

const GAME_PATH = /^\/app\/games\/([^/]+)\/?$/;

function route() {
  const root = document.getElementById("app");
  const client = new DonjonClient("");
  const match = GAME_PATH.exec(location.pathname);
  root.replaceChildren();
  if (match) {
    // ?at= is checked by the page once it knows the game's version (a bad one is said, not guessed at).
    const query = new URLSearchParams(location.search);
    return showGame(root, client, decodeURIComponent(match[1]), { at: query.get("at"), view: query.get("view"), bg: query.get("bg") });
  }
  return showLobby(root, client);
}

route().catch((error) => {
  const root = document.getElementById("app");
  const message = document.createElement("p");
  message.className = "alert";
  message.setAttribute("role", "alert");
  // A pruned game is not an accident: its events are in its export, which the message names.
  message.textContent = error.code === "game_pruned" ? `This game was pruned from the archive: ${error.message}`
    : `Something went wrong: ${error.message ?? error}`;
  root.append(message);
});
