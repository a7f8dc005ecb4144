// The lobby's controls for POST /games's service features (the catalog's `features`): a clock of any
// kind, what a timeout does, undo, and a spectator delay; and reading them back into the request.

import { h } from "./ui.js";

const CLOCK_KINDS = [
  ["", "No clock"],
  ["fischer", "Fischer: a time bank, plus an increment each move"],
  ["bank", "Sudden death: a time bank for the whole game"],
  ["per_move", "Per move: a fixed time for each move"],
];
const TIMEOUTS = { bot: "a bot makes the move", forfeit: "the seat forfeits" };
const DELAYS = [["", "None"], ["versions", "moves behind"], ["seconds", "seconds behind"]];

function numberField(id, label, value, { min = 0.1, step = "any" } = {}) {
  return h("div", { class: "field", "data-for": id },
    h("label", { for: id }, label),
    h("input", { type: "number", id, name: id, value, min, step, inputmode: "decimal" }));
}

function clockFieldset(gameId) {
  const kind = h("select", { id: `clock-${gameId}`, name: "clock_kind" },
    CLOCK_KINDS.map(([value, label]) => h("option", { value }, label)));
  const fields = h("div", { class: "clock-fields" },
    numberField(`clock-initial-${gameId}`, "Time bank (seconds)", 300),
    numberField(`clock-increment-${gameId}`, "Increment (seconds)", 5, { min: 0 }),
    numberField(`clock-per-move-${gameId}`, "Seconds per move", 30));
  const shown = { fischer: ["initial", "increment"], bank: ["initial"], per_move: ["per-move"] };
  const sync = () => {
    const wanted = new Set((shown[kind.value] ?? []).map((part) => `clock-${part}-${gameId}`));
    for (const field of fields.children) field.hidden = !wanted.has(field.dataset.for);
  };
  kind.addEventListener("change", sync);
  sync();
  return h("div", { class: "field-group" }, h("div", { class: "field" }, h("label", { for: kind.id }, "Turn clock"), kind), fields);
}

function timeoutField(gameId, spec) {
  const id = `on-timeout-${gameId}`;
  return h("div", { class: "field" }, h("label", { for: id }, "When a seat's time runs out"),
    h("select", { id, name: "on_timeout" }, (spec?.choices ?? Object.keys(TIMEOUTS)).map((choice) =>
      h("option", { value: choice, selected: choice === spec?.default }, TIMEOUTS[choice] ?? String(choice).replaceAll("_", " ")))));
}

function delayField(gameId) {
  const kind = h("select", { id: `delay-${gameId}`, name: "delay_kind", "aria-describedby": `delay-help-${gameId}` },
    DELAYS.map(([value, label]) => h("option", { value }, label)));
  const amount = h("input", { type: "number", id: `delay-amount-${gameId}`, name: "delay_amount", value: 5, min: 0.1, step: "any" });
  const amountField = h("div", { class: "field" }, h("label", { for: amount.id }, "How far behind"), amount);
  const sync = () => { amountField.hidden = !kind.value; };
  kind.addEventListener("change", sync);
  sync();
  return h("div", { class: "field-group" },
    h("div", { class: "field" }, h("label", { for: kind.id }, "Spectator delay"), kind,
      h("small", { id: `delay-help-${gameId}`, class: "help" }, "Spectators (and streams) see the game this far behind until it ends.")),
    amountField);
}

/** The fieldset of the service features, for the catalog entry `entry`. */
export function featureFields(entry) {
  const features = entry.features ?? {};
  const undoId = `undo-${entry.id}`;
  return h("fieldset", { class: "features" }, h("legend", {}, "Clock, undo and spectators"),
    clockFieldset(entry.id),
    timeoutField(entry.id, features.on_timeout),
    h("div", { class: "field check" },
      h("input", { type: "checkbox", id: undoId, name: "undo", checked: features.undo?.default ?? true }),
      h("label", { for: undoId }, "Undo: a seat may take back its own last move")),
    delayField(entry.id));
}

function seconds(form, name) {
  return Number(form.elements.namedItem(name).value);
}

/** POST /games's feature fields as the form sets them (absent: the service's default). */
export function readFeatures(form, entry) {
  const id = entry.id;
  const out = { undo: form.elements.namedItem("undo").checked, on_timeout: form.elements.namedItem("on_timeout").value };
  const clock = form.elements.namedItem("clock_kind").value;
  if (clock === "fischer") out.clock = { initial_s: seconds(form, `clock-initial-${id}`), increment_s: seconds(form, `clock-increment-${id}`) };
  else if (clock === "bank") out.clock = { initial_s: seconds(form, `clock-initial-${id}`) };
  else if (clock === "per_move") out.clock = { per_move_s: seconds(form, `clock-per-move-${id}`) };
  const delay = form.elements.namedItem("delay_kind").value;
  if (delay) out.spectator_delay = { [delay]: seconds(form, "delay_amount") };
  return out;
}
