// The fields src/index.d.ts promises for each frame and body, checked on what the server really
// sends, so a frame or route that changes without its types fails the tests.

import assert from "node:assert/strict";

const REQUIRED = {
  snapshot: { type: "string", game: "string", version: "number", status: "string", seat: "number|null", seats: "array", view: "object" },
  update: { type: "string", game: "string", version: "number", status: "string", seats: "array", events: "array", view: "object" },
  event: { version: "number", type: "string", payload: "object", actor: "number|null", ts: "number" },
  seat: { seat: "number", name: "string|null" },
  game: { id: "string", game: "string", status: "string", version: "number", seat: "number|null", seats: "array", view: "object" },
  state: { id: "string", game: "string", status: "string", version: "number", seats: "array", view: "object" },
  events: { id: "string", version: "number", from: "number", events: "array", next: "number|null" },
  lobby: { id: "string", game: "string", status: "string", version: "number", seats: "number", taken: "number", names: "array", created: "number" },
  catalog: { id: "string", title: "string", min_seats: "number", max_seats: "number", options: "object", bots: "array" },
  seatTaken: { seat: "number", token: "string", version: "number", status: "string" },
  rematch: { id: "string", seat: "number" },
};

const kindOf = (value) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

/** Assert `value` has every field the types declare for `shape`, of the declared kind. */
export function assertShape(shape, value) {
  for (const [field, kinds] of Object.entries(REQUIRED[shape])) {
    assert.ok(kinds.split("|").includes(kindOf(value?.[field])), `${shape}.${field} is ${kindOf(value?.[field])}, not ${kinds}`);
  }
  if (shape === "snapshot" || shape === "update" || shape === "game" || shape === "state") {
    assert.ok(Array.isArray(value.view.legal), `${shape}.view.legal is not a list`);
    value.seats.forEach((seat) => assertShape("seat", seat));
  }
  if (shape === "update" || shape === "events") value.events.forEach((event) => assertShape("event", event));
}
