// The lobby: the catalog (options, seats, bots), a form to create a game, and the open, active and
// finished games, each with "take a seat" (open games) and "watch".

import { featureFields, readFeatures } from "./features.js";
import { h, humanWords, storeSeat, storedSeat } from "./ui.js";

// The lists follow the lobby projection by themselves: read again this often while the page is
// visible (and at once when it becomes visible again), never while someone types in one of them.
const LOBBY_POLL_MS = 4000;

const LISTS = [
  ["open", "Open games: seats free"],
  ["active", "Being played"],
  ["finished", "Finished: replay and audit"],
];

function gameUrl(id) {
  return `/app/games/${encodeURIComponent(id)}`;
}

function alertBox() {
  return h("p", { class: "alert", role: "alert", hidden: true });
}

function say(box, message) {
  box.textContent = message;
  box.hidden = !message;
}

// --- the create form ----------------------------------------------------------------------------

function optionControl(gameId, name, spec) {
  const id = `opt-${gameId}-${name}`;
  const label = spec.label ?? humanWords(name); // the game's own word for it; the key is for programs
  const describedBy = `${id}-help`;
  const help = h("small", { id: describedBy, class: "help" }, spec.description ?? "");
  let input;
  if (spec.type === "bool") {
    input = h("input", { type: "checkbox", id, name, "aria-describedby": describedBy, checked: Boolean(spec.default) });
    return h("div", { class: "field check" }, input, h("label", { for: id }, label), help);
  }
  if (spec.type === "choice") {
    input = h("select", { id, name, "aria-describedby": describedBy },
      (spec.choices ?? []).map((choice) =>
        h("option", { value: JSON.stringify(choice), selected: choice === spec.default }, humanWords(String(choice)))));
  } else if (spec.type === "int") {
    input = h("input", { type: "number", id, name, "aria-describedby": describedBy, value: spec.default ?? "",
      min: spec.min, max: spec.max, step: 1 });
  } else {
    // "list" and anything newer: JSON typed by the user, left out when empty (the default applies).
    input = h("input", { type: "text", id, name, "aria-describedby": describedBy, placeholder: JSON.stringify(spec.default ?? null),
      "data-json": "1" });
  }
  return h("div", { class: "field" }, h("label", { for: id }, label), input, help);
}

function readOptions(form, entry) {
  const options = {};
  for (const [name, spec] of Object.entries(entry.options ?? {})) {
    const input = form.elements.namedItem(name);
    if (!input) continue;
    if (spec.type === "bool") options[name] = input.checked;
    else if (spec.type === "choice") options[name] = JSON.parse(input.value);
    else if (spec.type === "int") options[name] = Number.parseInt(input.value, 10);
    else if (input.value.trim()) options[name] = JSON.parse(input.value);
  }
  return options;
}

function seatRows(entry, count) {
  return Array.from({ length: count }, (_, seat) => {
    const id = `seat-${entry.id}-${seat}`;
    return h("div", { class: "field seat-row" },
      h("label", { for: id }, `Seat ${seat + 1}`),
      h("select", { id, name: `seat-${seat}`, "data-seat": seat },
        h("option", { value: "", selected: seat === 0 }, "a person"),
        (entry.bots ?? []).map((bot) => h("option", { value: bot, selected: seat > 0 && bot === entry.bots[0] }, `${bot} bot`))));
  });
}

function createForm(client, entry) {
  const alert = alertBox();
  const seatsBox = h("fieldset", { class: "seats" }, h("legend", {}, "Who sits where"));
  const seatCount = h("input", { type: "number", id: `seats-${entry.id}`, name: "seats", min: entry.min_seats,
    max: entry.max_seats, value: Math.max(entry.min_seats, Math.min(2, entry.max_seats)), required: true });
  const name = h("input", { type: "text", id: `name-${entry.id}`, name: "player", maxlength: 40, value: "Player", required: true,
    autocomplete: "nickname" });
  const redrawSeats = () => {
    const count = Math.max(entry.min_seats, Math.min(entry.max_seats, Number.parseInt(seatCount.value, 10) || entry.min_seats));
    const rows = seatsBox.querySelectorAll("select[data-seat]");
    if (rows.length === count) return;
    const chosen = [...rows].map((select) => select.value);
    seatsBox.replaceChildren(h("legend", {}, "Who sits where"), ...seatRows(entry, count));
    seatsBox.querySelectorAll("select[data-seat]").forEach((select, seat) => {
      if (seat < chosen.length) select.value = chosen[seat];
    });
  };
  seatCount.addEventListener("change", redrawSeats);
  const form = h("form", { class: "create", "data-game": entry.id, "aria-label": `New ${entry.title} game` },
    h("div", { class: "field" }, h("label", { for: seatCount.id }, `Seats (${entry.min_seats}–${entry.max_seats})`), seatCount),
    seatsBox,
    h("fieldset", { class: "options" }, h("legend", {}, "Options"),
      Object.entries(entry.options ?? {}).map(([option, spec]) => optionControl(entry.id, option, spec))),
    featureFields(entry),
    h("div", { class: "field" }, h("label", { for: name.id }, "Your name (for the first seat a person takes)"), name),
    h("button", { type: "submit" }, `Create a ${entry.title} game`),
    alert);
  redrawSeats();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    say(alert, "");
    try {
      const seats = Number.parseInt(seatCount.value, 10);
      const bots = {};
      for (const select of seatsBox.querySelectorAll("select[data-seat]")) {
        if (select.value) bots[select.dataset.seat] = select.value;
      }
      const allBots = Object.keys(bots).length === seats;
      const created = await client.createGame({ game: entry.id, seats, options: readOptions(form, entry), bots,
        ...readFeatures(form, entry), ...(allBots ? { bots_only: true } : {}) });
      if (!allBots) await takeSeat(client, created.id, name.value);
      location.assign(gameUrl(created.id));
    } catch (error) {
      say(alert, `${error.code ? `${error.code}: ` : ""}${error.message}`);
    }
  });
  return form;
}

async function takeSeat(client, gameId, name) {
  // The client sends a client_seed of crypto.getRandomValues for the seat (docs/protocol.md, Seeds):
  // every seat taken here contributes its own share of the game's seed.
  const taken = await client.takeSeat(gameId, { name });
  storeSeat(gameId, { seat: taken.seat, token: taken.token, name });
  return taken;
}

function catalogSection(client, games) {
  const picker = h("select", { id: "new-game", "aria-label": "Game to create" },
    games.map((entry) => h("option", { value: entry.id }, entry.title)));
  const holder = h("div", {});
  const show = () => {
    const entry = games.find((g) => g.id === picker.value) ?? games[0];
    holder.replaceChildren(
      h("p", { class: "about" }, `${entry.title}: ${entry.min_seats}–${entry.max_seats} seats; bots: ${(entry.bots ?? []).join(", ") || "none"}.`),
      createForm(client, entry));
  };
  picker.addEventListener("change", show);
  show();
  return h("section", { class: "card", "aria-labelledby": "new-title" },
    h("h2", { id: "new-title" }, "New game"),
    h("div", { class: "field" }, h("label", { for: "new-game" }, "Game"), picker),
    holder);
}

// --- the lists ----------------------------------------------------------------------------------

function seatsText(entry) {
  return (entry.names ?? []).map((n, i) => n ?? `seat ${i + 1} free`).join(" · ");
}

function scoreText(entry) {
  const scores = entry.summary?.scores;
  if (!Array.isArray(scores)) return "";
  return ` — scores ${scores.map((s) => (typeof s === "object" ? (s.vp ?? s.points ?? s.score) : s)).join(" : ")}`;
}

function listItem(client, entry, titles, refresh) {
  const title = titles.get(entry.game) ?? entry.game;
  const mine = storedSeat(entry.id);
  const actions = [];
  if (mine) actions.push(h("a", { class: "button", href: gameUrl(entry.id) }, `Play as ${mine.name ?? `seat ${mine.seat + 1}`}`));
  if (entry.status === "open" && !mine) {
    const alert = alertBox();
    const nameId = `join-${entry.id}`;
    const form = h("form", { class: "join", "aria-label": `Take a seat in game ${entry.id}` },
      h("label", { for: nameId }, "Name"),
      h("input", { id: nameId, type: "text", maxlength: 40, value: "Player", required: true }),
      h("button", { type: "submit" }, "Take a seat"),
      alert);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        await takeSeat(client, entry.id, form.querySelector("input").value);
        location.assign(gameUrl(entry.id));
      } catch (error) {
        say(alert, `${error.code ? `${error.code}: ` : ""}${error.message}`);
        refresh();
      }
    });
    actions.push(form);
  }
  actions.push(h("a", { class: "button secondary", href: gameUrl(entry.id) }, entry.status === "finished" ? "Replay" : "Watch"));
  return h("li", { class: "game-entry", "data-game-id": entry.id, "data-status": entry.status, "data-key": entryKey(entry) },
    h("div", {}, h("strong", {}, title), ` · ${entry.taken}/${entry.seats} seats · version ${entry.version}${scoreText(entry)}`),
    h("div", { class: "names" }, seatsText(entry)),
    h("div", { class: "actions" }, actions));
}

// An entry is drawn again only when something it shows changed, so a refresh leaves the rest alone.
function entryKey(entry) {
  return JSON.stringify([entry.id, entry.status, entry.version, entry.taken, entry.seats, entry.names ?? [],
    entry.summary ?? null, Boolean(storedSeat(entry.id))]);
}

async function fillList(client, list, status, titles, refresh) {
  const page = await client.listGames({ status, limit: 20 });
  if (list.querySelector(":focus-within, :focus")) return; // someone is typing a name or about to join
  const keys = page.games.map(entryKey);
  const shown = [...list.children].map((li) => li.dataset.key ?? "");
  if (list.children.length && keys.join("\n") === shown.join("\n")) return;
  const old = new Map([...list.children].map((li) => [li.dataset.key, li]));
  list.replaceChildren(...(page.games.length
    ? page.games.map((entry, i) => old.get(keys[i]) ?? listItem(client, entry, titles, refresh))
    : [h("li", { class: "empty", "data-key": "" }, "None yet.")]));
}

function keepFresh(refresh) {
  let timer = null;
  const tick = async () => {
    timer = null;
    if (document.visibilityState === "visible") {
      await refresh().catch((error) => console.warn("the lobby could not be read:", error));
    }
    timer = setTimeout(tick, LOBBY_POLL_MS);
  };
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState !== "visible" || timer === null) return;
    clearTimeout(timer);
    tick();
  });
  timer = setTimeout(tick, LOBBY_POLL_MS);
}

export async function showLobby(root, client) {
  document.title = "donjon — lobby";
  const { games } = await client.catalog();
  const titles = new Map(games.map((g) => [g.id, g.title]));
  const lists = new Map(LISTS.map(([status]) => [status, h("ul", { class: "games", id: `games-${status}`, "aria-live": "polite" })]));
  const refresh = () => Promise.all(LISTS.map(([status]) => fillList(client, lists.get(status), status, titles, refresh)));
  root.append(
    h("h1", {}, "Lobby"),
    h("div", { class: "lobby" },
      catalogSection(client, games),
      h("div", { class: "lists" },
        LISTS.map(([status, label]) => h("section", { class: "card", "aria-labelledby": `h-${status}` },
          h("h2", { id: `h-${status}` }, label), lists.get(status))),
        h("p", { class: "help" }, `The lists refresh themselves every ${LOBBY_POLL_MS / 1000} seconds while this page is shown.`),
        h("button", { type: "button", class: "secondary", onclick: () => refresh() }, "Refresh the lists now"))));
  await refresh();
  keepFresh(refresh);
}
