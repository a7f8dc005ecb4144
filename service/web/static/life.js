// The life of a game on its page: a seat may resign (after saying yes once more), undo when `legal`
// offers it, and ask for a rematch at the end; everyone sees how many spectators watch (a count from
// GET /games/{id}, then the socket's `spectators` frames; never who).
//
// Testing hooks: #resign, #resign-confirm (#resign-yes, #resign-no), #undo, #rematch, #rematch-link,
// #spectators (data-count).

import { h, storeSeat } from "./ui.js";

const RESIGN = { type: "resign", args: {} };
const UNDO = { type: "undo", args: {} };

function watching(count) {
  if (!count) return "No spectators.";
  return count === 1 ? "1 spectator watching." : `${count} spectators watching.`;
}

export class LifeControls {
  /** `page`: the GamePage (its client, game id, seat, the seat's stored token, send, say). */
  constructor(page) {
    this.page = page;
    this.spectators = h("p", { class: "spectators", id: "spectators", "aria-live": "polite", "data-count": 0 }, watching(0));
    this.undoButton = h("button", { type: "button", id: "undo", class: "secondary", hidden: true,
      onclick: () => this.page.send(UNDO).catch(() => {}) }, "Undo my last move");
    this.resignButton = h("button", { type: "button", id: "resign", class: "secondary danger", hidden: true,
      onclick: () => this.askResign() }, "Resign…");
    this.confirmBox = this.confirmation();
    this.rematchButton = h("button", { type: "button", id: "rematch", hidden: true, onclick: () => this.rematch() }, "Rematch");
    this.rematchLink = h("a", { class: "button secondary", id: "rematch-link", hidden: true }, "Watch the rematch");
    this.element = h("div", { class: "life", id: "life" },
      h("div", { class: "life-buttons" }, this.undoButton, this.resignButton, this.rematchButton, this.rematchLink),
      this.confirmBox);
  }

  confirmation() {
    this.yes = h("button", { type: "button", id: "resign-yes", class: "danger", onclick: () => this.resign() }, "Yes, resign");
    this.no = h("button", { type: "button", id: "resign-no", class: "secondary", onclick: () => this.closeResign() }, "Keep playing");
    return h("div", { class: "confirm", id: "resign-confirm", role: "group", "aria-labelledby": "resign-question", hidden: true },
      h("p", { id: "resign-question" }, "Resign this game? You leave it for good; the others play on, or it ends."),
      this.yes, " ", this.no);
  }

  setSpectators(count) {
    this.spectators.dataset.count = String(count ?? 0);
    this.spectators.textContent = watching(count ?? 0);
  }

  /** Show what fits the moment: `live` (not a replay), the game's `status`, its `legal` commands. */
  update({ live, status, legal, rematch }) {
    const seated = this.page.seat !== null;
    this.undoButton.hidden = !(seated && live && legal.some((command) => command.type === UNDO.type));
    this.resignButton.hidden = !(seated && live && status !== "finished");
    if (this.resignButton.hidden) this.confirmBox.hidden = true;
    this.rematchButton.hidden = !(seated && status === "finished" && this.page.mine?.token);
    this.rematchLink.hidden = !(rematch && !seated);
    if (rematch) this.rematchLink.href = `/app/games/${encodeURIComponent(rematch)}`;
  }

  askResign() {
    this.confirmBox.hidden = false;
    this.no.focus(); // the safe answer first: Enter does not resign by accident
  }

  closeResign() {
    this.confirmBox.hidden = true;
    this.resignButton.focus();
  }

  async resign() {
    this.confirmBox.hidden = true;
    await this.page.send(RESIGN).catch(() => {}); // a refusal is shown by send
  }

  /** Ask for the rematch (the first seat asking creates it), take this seat there, and go. */
  async rematch() {
    const { client, gameId, mine } = this.page;
    this.rematchButton.disabled = true;
    try {
      const made = await client.rematch(gameId, { token: mine.token });
      const taken = await client.takeSeat(made.id, { token: mine.token, name: mine.name ?? "Player" });
      storeSeat(made.id, { seat: taken.seat, token: taken.token, name: mine.name ?? "Player" });
      location.assign(`/app/games/${encodeURIComponent(made.id)}`);
    } catch (error) {
      this.page.say(`The rematch could not be set up: ${error.code ? `${error.code}: ` : ""}${error.message}`);
      this.rematchButton.disabled = false;
    }
  }
}
