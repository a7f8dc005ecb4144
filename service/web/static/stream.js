// The streamer's view, /app/games/{id}?view=stream (&bg=transparent|#rrggbb): for a broadcasting
// tool's browser source. The board, the scores and the last moves, large; no controls, no replay,
// no links; it watches as a spectator (no token), so the game's spectator delay holds on stream.

import { h } from "./ui.js";

const HEX = /^#[0-9a-fA-F]{6}$/;
const DEFAULT_BG = "#1d1d1d";

/** The page's background from `bg`: "transparent", a #rrggbb colour, or the default with a message. */
export function streamBackground(bg) {
  if (bg === null || bg === undefined || bg === "") return { color: DEFAULT_BG };
  if (bg === "transparent" || HEX.test(bg)) return { color: bg };
  return { color: DEFAULT_BG, error: `bg=${bg} is not a background: give transparent or a colour as #rrggbb.` };
}

/** The stream's page, from the parts the GamePage built (board, scoreboard, turn, log, alerts). */
export function streamLayout(page) {
  page.log.setAttribute("aria-label", "The last moves, newest last");
  return h("section", page.rootAttributes({ class: "game-page stream", "data-view": "stream" }),
    h("h1", { class: "stream-title", id: "game-title" }, page.entry.title),
    page.banner, page.alert,
    h("div", { class: "stream-layout" },
      h("section", { class: "stream-board", "aria-labelledby": "board-title" },
        h("h2", { id: "board-title", class: "visually-hidden" }, "Board"), page.boardBox),
      h("aside", { class: "stream-side" },
        h("section", { "aria-labelledby": "score-title" }, h("h2", { id: "score-title" }, "Scores"), page.turnLine, page.scoreboard),
        h("section", { "aria-labelledby": "log-title" }, h("h2", { id: "log-title" }, "Last moves"), page.log))));
}
