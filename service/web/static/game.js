// A game's page: the live board through the game's module (static/games/<game>.js), the scoreboard,
// whose turn it is, the log in words, the legal commands (the board's own controls, and a plain list
// of every legal command as a fallback), a banner while the connection is down, the replay scrubber
// (GET /games/{id}/state?at=N) and, once the game is finished, the audit panel.
//
// Testing hooks: the root carries data-game-id, data-game-version (the version drawn) and
// data-game-status; every control that sends carries data-command (the exact command from legal).

import { verifyExport, verifyExportText } from "../client/audit.js";
import { LifeControls } from "./life.js";
import { streamLayout, streamBackground } from "./stream.js";
import { h, humanWords, loadSeatStyle, nameSeats, seatMark, seatName, seatStyle, storedSeat } from "./ui.js";

const SPEEDS = [0.5, 1, 2, 4, 8];
const STEP_MOTION_MS = 300;

// --- the game module, or a plain stand-in -------------------------------------------------------

function plainBoard(container) {
  const pre = h("pre", { class: "plain-view", tabindex: 0, "aria-label": "The game's view as data" });
  container.append(h("p", {}, "No board drawing for this game here; its view as data:"), pre);
  return {
    update(state) {
      const { legal, ...rest } = state.view ?? {};
      pre.textContent = JSON.stringify(rest, null, 1);
    },
    destroy() { pre.remove(); },
  };
}

function plainDescribe(event, ctx) {
  const who = event.actor === null || event.actor === undefined ? "the service" : seatName(ctx.seats(), event.actor);
  const args = Object.entries(event.payload ?? {})
    .filter(([, v]) => typeof v !== "object")
    .map(([k, v]) => `${k} ${v}`).join(", ");
  return `${who}: ${event.type.replaceAll("_", " ")}${args ? ` (${args})` : ""}`;
}

/** A command as words: "undo", "play card: card knight blue", never "undo {}" or an id's "#1". */
function plainCommandLabel(command) {
  const words = (value) => (typeof value === "string" ? humanWords(value.replace(/#\d+$/, "")) : JSON.stringify(value));
  const args = Object.entries(command.args ?? {}).map(([k, v]) => `${humanWords(k)} ${Array.isArray(v) ? v.map(words).join(", ") : words(v)}`);
  const label = { undo: "Undo your last move", resign: "Resign" }[command.type] ?? humanWords(command.type);
  return args.length ? `${label}: ${args.join("; ")}` : label;
}

/** `?at=` as the API takes it (a whole number from 1 to the version shown), or why it is not one. */
export function parseAt(raw, latest) {
  if (raw === null || raw === undefined) return { at: null };
  const said = `?at=${raw}`;
  if (!/^-?\d+$/.test(raw.trim())) return { error: `${said} is not a version: give a whole number from 1 to ${latest}. Showing the game live.` };
  const at = Number(raw);
  if (at < 1) return { error: `${said}: versions start at 1 (this game is at ${latest}). Showing the game live.` };
  if (at > latest) return { error: `${said} is beyond this game's version ${latest}. Showing the game live.` };
  return { at };
}

function plainSummary(view) {
  const raw = view?.scores;
  const scores = Array.isArray(raw)
    ? raw.map((s, seat) => (typeof s === "object" ? { seat: s.seat ?? seat, points: s.vp ?? s.points ?? s.score ?? 0 } : { seat, points: s }))
    : [];
  const turn = view?.current ?? view?.active ?? view?.turn_seat ?? null;
  return { scores, turn: Number.isInteger(turn) ? turn : null, text: view?.phase ? `phase: ${view.phase}` : "" };
}

async function loadModule(game) {
  try {
    const module = await import(`./games/${game}.js`);
    return {
      createBoard: module.createBoard ?? plainBoard,
      describeEvent: module.describeEvent ?? plainDescribe,
      summary: module.summary ?? plainSummary,
      drawn: Boolean(module.createBoard),
    };
  } catch (error) {
    console.warn(`no board module for ${game}:`, error);
    return { createBoard: plainBoard, describeEvent: plainDescribe, summary: plainSummary, drawn: false };
  }
}

async function loadAssets(game) {
  try {
    const response = await fetch(`/games/catalog/${encodeURIComponent(game)}/assets`);
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

function safely(fn, fallback) {
  try {
    return fn();
  } catch (error) {
    console.error(error);
    return fallback;
  }
}

// --- the page -----------------------------------------------------------------------------------

export async function showGame(root, client, gameId, { at = null, view = null, bg = null } = {}) {
  const page = new GamePage(root, client, gameId, { stream: view === "stream", bg });
  await page.start(at);
  globalThis.donjonApp = page; // for people poking at it in the console, and for the browser tests
  return page;
}

class GamePage {
  constructor(root, client, gameId, { stream = false, bg = null } = {}) {
    this.root = root;
    this.client = client;
    this.gameId = gameId;
    this.stream = stream; // the streamer's view: a spectator's, so it keeps the spectator delay
    this.bg = bg;
    this.mine = stream ? null : storedSeat(gameId);
    this.conn = null;
    this.board = null;
    this.previousView = null;
    this.events = new Map(); // version -> event, as this viewer may see it
    this.replayAt = null; // null: live; else the version shown
    this.replayCache = new Map();
    this.playTimer = null;
    this.sending = false;
    this.drawnState = null;
  }

  // -- set-up --

  async start(at) {
    const first = await this.client.getGame(this.gameId, { token: this.mine?.token }).catch((error) => {
      if (error.code === "unauthorized" && this.mine) return this.client.getGame(this.gameId);
      throw error;
    });
    this.game = first.game;
    const [catalog, module, assets] = await Promise.all([this.client.catalog(), loadModule(first.game), loadAssets(first.game), loadSeatStyle()]);
    this.entry = catalog.games.find((g) => g.id === first.game) ?? { id: first.game, title: first.game };
    this.module = module;
    this.seat = first.seat ?? null;
    this.seats = first.seats;
    nameSeats(this.seats);
    this.latest = first.version;
    this.status = first.status;
    document.title = `${this.entry.title} — donjon${this.stream ? " (stream)" : ""}`;
    this.life = new LifeControls(this);
    this.life.setSpectators(first.spectators ?? 0);
    this.layout();
    if (this.stream) this.streamSetUp();
    this.ctx = {
      game: first.game,
      entry: this.entry,
      assets,
      seat: this.seat,
      send: (command) => this.send(command),
      seatStyle,
      seats: () => this.seats,
    };
    this.board = safely(() => module.createBoard(this.boardBox, this.ctx), null) ?? plainBoard(this.boardBox);
    await this.connect();
    if (this.stream) this.loadRecent();
    else this.loadHistory();
    const asked = this.stream ? { at: null } : parseAt(at, this.latest);
    if (asked.error) {
      this.say(asked.error);
      history.replaceState(null, "", location.pathname); // the address no longer claims a moment not shown
    }
    if (asked.at) await this.showReplay(asked.at);
  }

  streamSetUp() {
    const bg = streamBackground(this.bg);
    if (bg.error) this.say(bg.error);
    document.body.classList.add("streaming");
    document.documentElement.style.setProperty("--stream-bg", bg.color);
  }

  layout() {
    this.buildParts();
    if (this.stream) {
      this.rootEl = streamLayout(this);
      this.root.append(this.rootEl);
      return;
    }
    this.root.append(this.rootEl = this.pageLayout());
  }

  buildParts() {
    this.statusLine = h("p", { class: "status-line", "aria-live": "polite" });
    this.banner = h("div", { class: "banner", id: "connection-banner", role: "status", hidden: true });
    this.alert = h("p", { class: "alert", role: "alert", hidden: true });
    this.boardBox = h("div", { class: "board", id: "board", "aria-label": "Board" });
    this.scoreboard = h("ol", { class: "scoreboard", id: "scoreboard" });
    this.turnLine = h("p", { class: "turn", id: "turn", "aria-live": "polite" });
    this.legalList = h("ul", { class: "legal", id: "legal" });
    // Spectators get no controls, so no list of them either.
    this.legalBox = h("details", { class: "card legal-box", id: "legal-box", open: !this.module.drawn, hidden: this.seat === null },
      h("summary", {}, "Every legal command, as a list"), this.legalList);
    // Focusable, so that a keyboard can scroll it (it stays a list: the turn line is what is announced).
    this.log = h("ol", { class: "log", id: "log", tabindex: 0, "aria-label": "What happened, newest last" });
    this.replayBox = this.replayControls();
    this.auditBox = h("section", { class: "card audit", id: "audit", "aria-labelledby": "audit-title", hidden: true });
    this.legalList.addEventListener("click", (event) => this.onLegalClick(event));
  }

  rootAttributes(extra = {}) {
    return { class: "game-page", id: "game", "data-game-id": this.gameId, "data-game-version": 0,
      "data-game-status": this.status, "data-game": this.game, "data-seat": this.seat ?? "spectator", ...extra };
  }

  pageLayout() {
    const title = h("h1", { id: "game-title" }, this.entry.title);
    const who = this.seat === null ? "You are watching."
      : h("span", {}, seatMark(this.seat), ` You play as ${seatName(this.seats, this.seat)}.`);
    return h("section", this.rootAttributes(),
      h("div", { class: "game-head" }, title, h("a", { href: "/", class: "button secondary" }, "Lobby"),
        h("span", { class: "who" }, who),
        h("a", { href: `/app/games/${encodeURIComponent(this.gameId)}?view=stream`, class: "button secondary" }, "Stream view")),
      this.banner, this.statusLine, this.alert,
      h("div", { class: "game-layout" },
        h("div", { class: "main-col" },
          // The boards title their panels with h3: a heading of the board's own keeps the order.
          h("section", { class: "board-section", "aria-labelledby": "board-title" },
            h("h2", { id: "board-title", class: "visually-hidden" }, "Board"), this.boardBox),
          this.replayBox),
        h("aside", { class: "side-col" },
          h("section", { class: "card", "aria-labelledby": "score-title" }, h("h2", { id: "score-title" }, "Scores"),
            this.turnLine, this.scoreboard, this.life.spectators, this.life.element),
          this.legalBox,
          h("section", { class: "card", "aria-labelledby": "log-title" }, h("h2", { id: "log-title" }, "Log"), this.log),
          this.auditBox)));
  }

  // -- live --

  async connect() {
    this.conn = this.client.connect(this.gameId, { token: this.seat === null ? undefined : this.mine?.token });
    this.conn.on("connection", (detail) => this.onConnection(detail));
    this.conn.on("change", (detail) => this.onChange(detail));
    this.conn.on("error", (error) => this.say(`${error.code}: ${error.message}`));
    this.conn.on("spectators", ({ count }) => this.life.setSpectators(count));
    this.conn.on("rematch", ({ id }) => this.life.update({ live: this.replayAt === null, status: this.status,
      legal: this.drawnState?.legal ?? [], rematch: id }));
    await this.conn.ready;
    this.drawIfBlank();
  }

  onConnection({ state, attempt }) {
    const down = state === "reconnecting" || state === "closed" || (state === "connecting" && attempt > 0);
    this.banner.hidden = !down;
    this.banner.textContent = state === "closed"
      ? "The connection is closed. Reload the page to follow the game again."
      : `The connection is down; reconnecting${attempt ? ` (attempt ${attempt})` : ""}… Nothing is lost meanwhile.`;
    this.rootEl.dataset.connection = state;
  }

  onChange({ version, status, seats, view, events }) {
    this.seats = seats ?? this.seats;
    nameSeats(this.seats);
    this.status = status;
    this.latest = Math.max(this.latest, version);
    this.liveView = view;
    // The board first: nothing else this does (the log, the audit panel) may keep a page that opens
    // as a game ends from drawing it.
    if (this.replayAt === null) this.draw({ view, status, seats: this.seats, version, live: true, legal: view?.legal ?? [] });
    else if (this.drawnState) this.drawScores(this.drawnState.view); // seats taken meanwhile show in replay too
    for (const event of events ?? []) safely(() => this.addEvent(event), null);
    this.updateScrubber();
    if (status === "finished") safely(() => this.showAudit(), null);
  }

  /** Draw what the connection holds if no change has been drawn yet (ready resolves on the first frame). */
  drawIfBlank() {
    const conn = this.conn;
    if (this.drawnState !== null || conn.version === null || this.replayAt !== null) return;
    this.onChange({ version: conn.version, status: conn.status, seats: conn.seats, view: conn.view, events: [] });
  }

  async loadHistory() {
    try {
      for await (const event of this.client.allEvents(this.gameId, { token: this.seat === null ? undefined : this.mine?.token })) {
        this.addEvent(event);
      }
    } catch (error) {
      this.say(`The log could not be read: ${error.message}`);
    }
    this.historyLoaded = true;
    if (this.replayAt === null) this.log.scrollTop = this.log.scrollHeight; // the newest, where live ones arrive
  }

  /** The stream's log: only the last few moves (it shows no more), then the live ones. */
  async loadRecent() {
    try {
      const page = await this.client.events(this.gameId, { from: Math.max(1, (this.conn.version ?? this.latest) - 7) });
      for (const event of page.events) this.addEvent(event);
    } catch (error) {
      this.say(`The last moves could not be read: ${error.message}`);
    }
    this.historyLoaded = true;
  }

  addEvent(event) {
    if (this.events.has(event.version)) return;
    this.events.set(event.version, event);
    const text = safely(() => this.module.describeEvent(event, this.ctx), null) ?? plainDescribe(event, this.ctx);
    const item = h("li", { "data-version": event.version }, h("span", { class: "v" }, `${event.version}`), " ", text);
    const after = [...this.log.children].find((li) => Number(li.dataset.version) > event.version);
    if (this.historyLoaded && !after) item.classList.add("fresh"); // a live arrival: fades in (app.css)
    const following = !this.historyLoaded || this.followsLog(); // while the history loads, the end is followed
    this.log.insertBefore(item, after ?? null);
    this.markLog();
    // The log scrolls itself to a live arrival, and only when it was showing its end: never the page
    // (scrollIntoView would scroll every scrolled ancestor, pushing a phone's board off screen).
    if (this.replayAt === null && !after && following) this.log.scrollTop = this.log.scrollHeight;
  }

  followsLog() {
    return this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 48;
  }

  markLog() {
    const shown = this.replayAt ?? this.latest;
    let current = null;
    for (const li of this.log.children) {
      const version = Number(li.dataset.version);
      li.classList.toggle("future", version > shown);
      if (version <= shown) current = li;
    }
    for (const li of this.log.querySelectorAll("[aria-current]")) li.removeAttribute("aria-current");
    if (this.replayAt === null || !current) return;
    current.setAttribute("aria-current", "step");
    // The log scrolls itself (never the page) to the moment shown.
    this.log.scrollTop = Math.max(0, current.offsetTop - this.log.clientHeight / 2);
  }

  // -- drawing --

  draw(state) {
    const full = { ...state, previousView: this.previousView, legal: state.live ? state.legal : [] };
    safely(() => this.board.update(full), null);
    this.previousView = state.view;
    this.drawnState = full;
    this.rootEl.dataset.gameVersion = String(state.version);
    this.rootEl.dataset.gameStatus = state.status;
    this.rootEl.dataset.mode = state.live ? "live" : "replay";
    this.drawScores(state.view);
    this.drawLegal(full.legal);
    this.life.update({ live: state.live, status: state.status, legal: full.legal, rematch: this.conn?.rematch ?? null });
    this.statusLine.textContent = `${state.live ? "Live" : "Replay"} · version ${state.version} of ${this.latest} · ${state.status}`;
    this.markLog();
  }

  drawScores(view) {
    const summary = safely(() => this.module.summary(view, this.ctx), null) ?? plainSummary(view);
    const points = new Map((summary.scores ?? []).map((s) => [s.seat, s.points]));
    this.scoreboard.replaceChildren(...(this.seats ?? []).map(({ seat, name, bot }) =>
      h("li", { class: seat === summary.turn ? "to-play" : "", "data-seat": seat, "aria-current": seat === summary.turn ? "true" : undefined },
        seatMark(seat), " ", h("span", { class: "name" }, name ?? "free seat"), bot ? h("small", {}, " (bot)") : null,
        h("span", { class: "points" }, points.has(seat) ? String(points.get(seat)) : "–"),
        seat === summary.turn ? h("span", { class: "badge" }, "to play") : null)));
    // The game module's text says whose turn it is in the game's words; the names are the fallback.
    const hasTurn = summary.turn !== null && summary.turn !== undefined;
    const turn = summary.text || (hasTurn ? `${seatName(this.seats, summary.turn)} to play.` : "");
    const mine = this.seat !== null && summary.turn === this.seat && this.replayAt === null ? "Your turn. " : "";
    this.turnLine.textContent = `${mine}${turn}`.trim() || (this.status === "finished" ? "The game is over." : "");
  }

  drawLegal(legal) {
    this.legalList.replaceChildren(...legal.map((command) =>
      h("li", {}, h("button", { type: "button", "data-command": JSON.stringify(command), disabled: this.sending },
        safely(() => this.module.describeCommand?.(command, this.ctx), null) ?? plainCommandLabel(command)))));
    if (!legal.length) {
      const why = this.seat === null ? "Spectators have no commands." : this.replayAt !== null ? "Replay: go live to play." : "Nothing to do now.";
      this.legalList.append(h("li", { class: "empty" }, why));
    }
  }

  // -- commands --

  onLegalClick(event) {
    const button = event.target.closest("[data-command]");
    if (button && !button.disabled) this.send(JSON.parse(button.dataset.command));
  }

  async send(command) {
    if (this.seat === null || this.replayAt !== null) throw new Error("only a seat's live page sends commands");
    this.sending = true;
    const buttons = () => [...this.legalList.querySelectorAll("button"), ...this.life.element.querySelectorAll("button")];
    for (const b of buttons()) b.disabled = true;
    this.say("");
    try {
      return await this.conn.send(command, { expectedVersion: this.conn.version });
    } catch (error) {
      this.say(`Refused: ${error.code}: ${error.message}`);
      throw error;
    } finally {
      this.sending = false;
      for (const b of buttons()) b.disabled = false;
    }
  }

  say(message) {
    this.alert.textContent = message;
    this.alert.hidden = !message;
  }

  // -- replay --

  replayControls() {
    const button = (label, action, key) => h("button", { type: "button", "data-replay": key, onclick: action }, label);
    this.slider = h("input", { type: "range", id: "replay-slider", min: 1, max: 1, value: 1, "aria-label": "Version shown" });
    this.slider.addEventListener("input", () => this.showReplay(Number(this.slider.value)));
    this.speed = h("select", { id: "replay-speed", "aria-label": "Playback speed" },
      SPEEDS.map((s) => h("option", { value: s, selected: s === 2 }, `${s}× (${Math.round(1000 / s)} ms a step)`)));
    this.playButton = button("Play", () => this.togglePlay(), "play");
    this.sliderLabel = h("output", { for: "replay-slider", id: "replay-at" }, "live");
    return h("section", { class: "card replay", "aria-labelledby": "replay-title" },
      h("h2", { id: "replay-title" }, "Replay"),
      h("div", { class: "replay-buttons" },
        button("First", () => this.showReplay(1), "first"),
        button("Previous", () => this.showReplay(Math.max(1, (this.replayAt ?? this.latest) - 1), { motion: STEP_MOTION_MS }), "previous"),
        this.playButton,
        button("Next", () => this.showReplay(Math.min(this.latest, (this.replayAt ?? this.latest) + 1), { motion: STEP_MOTION_MS }), "next"),
        button("Last", () => this.showReplay(this.latest), "last"),
        button("Live", () => this.goLive(), "live")),
      h("div", { class: "replay-slider" }, this.slider, this.sliderLabel),
      h("label", { for: "replay-speed" }, "Speed "), this.speed,
      h("p", { class: "help" }, "Share a moment: the address bar keeps ?at=N while you scrub."));
  }

  updateScrubber() {
    this.slider.max = String(this.latest);
    if (this.replayAt === null) this.slider.value = String(this.latest);
  }

  async stateAt(version) {
    if (!this.replayCache.has(version)) this.replayCache.set(version, this.client.state(this.gameId, { at: version }));
    try {
      return await this.replayCache.get(version);
    } catch (error) {
      this.replayCache.delete(version);
      throw error;
    }
  }

  // motion: how long the board may animate what changed (ms); 0 for jumps (the slider, first, last),
  // short for single steps, and never longer than a playback step.
  async showReplay(version, { motion = 0 } = {}) {
    this.replayAt = version;
    this.slider.value = String(version);
    this.sliderLabel.textContent = `version ${version}`;
    history.replaceState(null, "", `${location.pathname}?at=${version}`);
    try {
      const state = await this.stateAt(version);
      if (this.replayAt !== version) return; // scrubbed on meanwhile
      this.draw({ view: state.view, status: state.status, seats: state.seats, version: state.version, live: false, legal: [], motion });
    } catch (error) {
      this.say(`Version ${version} could not be shown: ${error.message}`);
    }
  }

  goLive() {
    this.stopPlay();
    this.replayAt = null;
    this.sliderLabel.textContent = "live";
    history.replaceState(null, "", location.pathname);
    this.updateScrubber();
    this.draw({ view: this.conn.view, status: this.conn.status, seats: this.seats, version: this.conn.version, live: true,
      legal: this.conn.legal ?? [], motion: 0 });
  }

  togglePlay() {
    if (this.playTimer) return this.stopPlay();
    if (this.replayAt === null || this.replayAt >= this.latest) this.showReplay(1);
    this.playButton.textContent = "Pause";
    this.playButton.setAttribute("aria-pressed", "true");
    const step = async () => {
      if (this.replayAt === null || this.replayAt >= this.latest) return this.stopPlay();
      await this.showReplay(this.replayAt + 1, { motion: Math.min(STEP_MOTION_MS, 600 / Number(this.speed.value)) });
      this.playTimer = setTimeout(step, 1000 / Number(this.speed.value));
    };
    this.playTimer = setTimeout(step, 1000 / Number(this.speed.value));
    return undefined;
  }

  stopPlay() {
    clearTimeout(this.playTimer);
    this.playTimer = null;
    this.playButton.textContent = "Play";
    this.playButton.setAttribute("aria-pressed", "false");
  }

  // -- audit --

  showAudit() {
    if (!this.auditBox.hidden) return;
    this.auditBox.hidden = false;
    const secure = Boolean(globalThis.crypto?.subtle);
    this.auditResult = h("div", { class: "audit-result", id: "audit-result", "aria-live": "polite" });
    const file = h("input", { type: "file", id: "audit-file", accept: "application/json,.json" });
    file.addEventListener("change", async () => {
      const chosen = file.files?.[0];
      if (!chosen) return;
      // A loaded file is pinned like the served export: a file signed by a key this deployment does
      // not list is refused, however well it is signed (issue 21).
      const keys = await this.deploymentKeys(chosen.name);
      if (keys) this.showVerdict(await verifyExportText(await chosen.text(), { trustedKeys: keys }), chosen.name, keys);
    });
    this.auditBox.replaceChildren(
      h("h2", { id: "audit-title" }, "Audit"),
      h("p", {}, "Re-check this game here, in your browser: the hash chain over every stored event, the seed ",
        "commitment made at the start against the seed revealed at the end, each seat's share of the seed, ",
        "every draw the browser can re-derive from that seed, and the signature, which must be by a key this ",
        "deployment lists at ", h("code", {}, "GET /keys"), " (for a file you load too). The result lists what was ",
        "checked here and what only ", h("code", {}, "donjon verify"), " checks."),
      h("p", { class: "help" }, secure
        ? "Hashes: WebCrypto (this page is a secure context)."
        : "Hashes: this page is not a secure context (plain http to a host other than localhost), so the browser offers no WebCrypto; the built-in SHA-1 and SHA-256 compute the same digests."),
      h("button", { type: "button", id: "audit-run", onclick: () => this.auditServed() }, "Verify this game's export"),
      " ",
      h("a", { class: "button secondary", href: `/games/${encodeURIComponent(this.gameId)}/export`, download: `${this.gameId}.json` }, "Download the export"),
      h("div", { class: "field" }, h("label", { for: "audit-file" }, "Or verify a file you have: "), file),
      this.auditResult,
      h("p", { class: "help" }, "For the rest: ", h("code", {}, `donjon verify ${this.gameId}.json`),
        " on the downloaded file, anywhere, or ", h("code", {}, `donjon replay ${this.gameId}`), " where the store is."));
  }

  async auditServed() {
    const what = "this game's export";
    const keys = await this.deploymentKeys(what);
    if (!keys) return;
    try {
      const exported = await this.client.exportGame(this.gameId);
      this.showVerdict(await verifyExport(exported, { trustedKeys: keys }), what, keys);
    } catch (error) {
      this.showVerdict({ ok: false, checks: [{ name: "export", ok: false, detail: `${error.code}: ${error.message}` }] }, what);
    }
  }

  /** This deployment's GET /keys, read afresh for every check (a rotation adds a key); null, with the
   * verdict shown as refused, when it cannot be read: without it nothing here can say who signed. */
  async deploymentKeys(what) {
    try {
      return await this.client.keys();
    } catch (error) {
      const detail = `this deployment's keys (GET /keys) could not be read (${error.code ?? "error"}: ${error.message}), so the signer cannot be checked`;
      this.showVerdict({ ok: false, checks: [{ name: "keys", ok: false, detail }], beyond: [] }, what);
      return null;
    }
  }

  showVerdict(result, what, keys = null) {
    // A legacy game (recorded before donjon-draw-1) verifies with weaker guarantees: never a plain pass.
    const state = !result.ok ? "fail" : result.legacy ? "legacy" : "pass";
    const said = { pass: `✔ ${what} verifies.`, legacy: `⚠ ${what} verifies, legacy: weaker guarantees.`, fail: `✘ ${what} does not verify.` };
    this.auditBox.dataset.auditResult = state;
    this.auditResult.replaceChildren(
      h("p", { class: state }, said[state]),
      h("p", { class: "audit-pinned" }, pinnedTo(keys)),
      h("h3", {}, "Checked in this browser"),
      h("ul", { class: "audit-checked" }, result.checks.map((c) => h("li", { class: c.ok ? "pass" : "fail", "data-check": c.name },
        `${c.ok ? "✔" : "✘"} ${c.name}: ${c.detail}`))),
      h("h3", {}, "Checked only by ", h("code", {}, "donjon verify")),
      h("ul", { class: "audit-beyond" }, (result.beyond ?? []).map((line) => h("li", {}, line))));
  }
}

/** What the signer was checked against: the keys this deployment lists (their ids and status). */
function pinnedTo(keys) {
  const listed = Array.isArray(keys?.keys) ? keys.keys : [];
  if (!listed.length) return "Signer: not checked against this deployment's keys.";
  const names = listed.map((k) => `${k.id} (${k.status ?? "current"})`).join(", ");
  return `Signer checked against the keys this deployment lists at GET /keys: ${names}.`;
}
