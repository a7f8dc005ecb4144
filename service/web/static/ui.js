// Small things the lobby and the game page share: building elements, the seat tokens kept in this
// browser, and seat styles (the boards' common.js when it is there, the same palette otherwise).

/** h("button", {class: "x", onclick: fn}, "text", child) -> an element. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

const SEAT_KEY = (gameId) => `donjon.seat.${gameId}`;

/** This browser's seat in a game: {seat, token, name} or null. Tokens live here, never in a URL. */
export function storedSeat(gameId) {
  try {
    const raw = localStorage.getItem(SEAT_KEY(gameId));
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

export function storeSeat(gameId, seat) {
  localStorage.setItem(SEAT_KEY(gameId), JSON.stringify(seat));
}

export function forgetSeat(gameId) {
  localStorage.removeItem(SEAT_KEY(gameId));
}

// Okabe-Ito: distinguishable with the common colour-vision deficiencies; a shape for each seat too.
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"];
const SHAPES = ["circle", "square", "triangle", "diamond", "star", "hexagon"];
const NAMES = ["blue", "orange", "green", "pink", "sky", "vermilion"];

function fallbackSeatStyle(seat) {
  const i = ((seat ?? 0) % PALETTE.length + PALETTE.length) % PALETTE.length;
  return { color: PALETTE[i], shape: SHAPES[i], pattern: null, label: `seat ${seat} (${NAMES[i]} ${SHAPES[i]})` };
}

let seatStyleFn = fallbackSeatStyle;
let nameSeatsFn = () => {};

/** Load the boards' seatStyle once (static/games/common.js), keeping the fallback if it is absent. */
export async function loadSeatStyle() {
  try {
    const common = await import("./games/common.js");
    if (typeof common.seatStyle === "function") seatStyleFn = common.seatStyle;
    if (typeof common.setSeatNames === "function") nameSeatsFn = common.setSeatNames;
  } catch {
    // No common.js yet: the fallback palette is the same idea.
  }
  return seatStyleFn;
}

export function seatStyle(seat) {
  return seatStyleFn(seat);
}

/** Tell the boards the players' names (`seats` of GET /games/{id}), so that they label seats by them. */
export function nameSeats(seats) {
  nameSeatsFn(seats);
}

const SHAPE_PATHS = {
  circle: '<circle cx="8" cy="8" r="6"/>',
  square: '<rect x="2.5" y="2.5" width="11" height="11"/>',
  triangle: '<path d="M8 1.5 L14.5 14 H1.5 Z"/>',
  diamond: '<path d="M8 1 L15 8 L8 15 L1 8 Z"/>',
  star: '<path d="M8 1 L10 6 L15 6 L11 9.5 L12.5 15 L8 11.5 L3.5 15 L5 9.5 L1 6 L6 6 Z"/>',
  hexagon: '<path d="M4 1.5 H12 L15.5 8 L12 14.5 H4 L0.5 8 Z"/>',
};

/** A small SVG mark of a seat: its colour and its shape, with the style's label for screen readers. */
export function seatMark(seat) {
  const style = seatStyle(seat);
  const label = style.label ?? `seat ${seat}`;
  const span = h("span", { class: "seat-mark", role: "img", "aria-label": label, title: label });
  const shape = SHAPE_PATHS[style.shape] ?? SHAPE_PATHS.circle;
  span.innerHTML = `<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true"><g fill="${style.color}" stroke="#000" stroke-width="1">${shape}</g></svg>`;
  return span;
}

/** A program's word ("east_west", "play_card") as people write it ("east west", "play card"). */
export function humanWords(text) {
  return String(text).replaceAll("_", " ");
}

export function seatName(seats, seat) {
  const entry = (seats ?? []).find((s) => s.seat === seat);
  return entry?.name ?? `seat ${seat + 1}`; // a free seat: numbered from 1, as people count
}
