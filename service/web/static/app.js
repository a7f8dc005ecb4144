// The router: "/" is the lobby, "/app/games/{id}" a game's page (with "?at=N": its replay at version N).

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
    const at = Number.parseInt(new URLSearchParams(location.search).get("at") ?? "", 10);
    return showGame(root, client, decodeURIComponent(match[1]), { at: Number.isInteger(at) && at > 0 ? at : null });
  }
  return showLobby(root, client);
}

route().catch((error) => {
  const root = document.getElementById("app");
  const message = document.createElement("p");
  message.className = "alert";
  message.setAttribute("role", "alert");
  message.textContent = `Something went wrong: ${error.message ?? error}`;
  root.append(message);
});
