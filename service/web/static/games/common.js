// Shared pieces of the game boards: SVG/HTML builders, seat styles, controls, tile drawing.
// No dependencies, no build step: plain ES module, loaded by each game's board module.

export const SVG_NS = "http://www.w3.org/2000/svg";

// Okabe-Ito: distinguishable with the common colour-vision deficiencies; every seat also has a
// shape and a pattern, so colour is never the only cue.
const SEAT_COLORS = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#CC79A7", "#D55E00", "#0072B2", "#999999"];
const SEAT_COLOR_NAMES = ["orange", "sky blue", "green", "yellow", "purple", "vermilion", "blue", "grey"];
const SEAT_SHAPES = ["circle", "square", "triangle", "diamond", "star", "hexagon", "cross", "ring"];
const SEAT_PATTERNS = ["solid", "stripes", "dots", "grid", "waves", "checks", "diagonal", "rings"];

// The players' names by seat, as the page knows them (setSeatNames): people are named, not numbered.
let seatNames = [];

/** Name the seats in every label the boards draw from now on: `seats` as GET /games/{id} lists them. */
export function setSeatNames(seats) {
  seatNames = [];
  for (const entry of seats || []) if (entry?.name) seatNames[entry.seat] = entry.name;
}

export function seatStyle(seat) {
  if (seat === null || seat === undefined) {
    return { color: "#777777", shape: "ring", pattern: "solid", label: "spectator" };
  }
  const i = ((seat % SEAT_COLORS.length) + SEAT_COLORS.length) % SEAT_COLORS.length;
  const mark = `${SEAT_COLOR_NAMES[i]} ${SEAT_SHAPES[i]}`;
  return {
    color: SEAT_COLORS[i],
    shape: SEAT_SHAPES[i],
    pattern: SEAT_PATTERNS[i],
    label: seatNames[seat] ? `${seatNames[seat]} (${mark})` : `seat ${seat + 1} (${mark})`,
  };
}

// --- element builders ---------------------------------------------------------------------

function applyAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  return node;
}

function append(node, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

export function svg(tag, attrs = {}, children = []) {
  return append(applyAttrs(document.createElementNS(SVG_NS, tag), attrs), children);
}

export function html(tag, attrs = {}, children = []) {
  return append(applyAttrs(document.createElement(tag), attrs), children);
}

export function title(text) {
  return svg("title", { text });
}

// --- controls -------------------------------------------------------------------------------

export const commandKey = (command) => JSON.stringify(command);

// A control sends exactly one legal entry: data-command is its JSON, the click sends the entry.
export function asCommand(node, command, label) {
  node.setAttribute("data-command", commandKey(command));
  return asButton(node, label);
}

// A selector only narrows a choice (a cell, a card); data-select names what it selects.
export function asSelect(node, key, label, selected = false) {
  node.setAttribute("data-select", key);
  if (selected) node.setAttribute("aria-pressed", "true");
  else node.setAttribute("aria-pressed", "false");
  return asButton(node, label);
}

function asButton(node, label) {
  node.setAttribute("tabindex", "0");
  node.setAttribute("role", "button");
  node.setAttribute("aria-label", label);
  node.classList.add("board-control");
  if (node.namespaceURI === SVG_NS && !node.querySelector(":scope > title")) node.prepend(title(label));
  return node;
}

export function commandButton(command, label) {
  return asCommand(html("button", { type: "button", class: "board-button", text: label }), command, label);
}

export function selectButton(key, label, selected) {
  return asSelect(html("button", { type: "button", class: "board-button", text: label }), key, label, selected);
}

// Wires clicks and Enter/Space on [data-command] and [data-select] inside root, once.
// onCommand(key) sends; onSelect(key) narrows. Both look the element up at event time, so the
// board can redraw its content freely.
export function wireControls(root, { onCommand, onSelect }) {
  const activate = (target) => {
    const command = target.closest("[data-command]");
    if (command && root.contains(command)) {
      onCommand(command.getAttribute("data-command"));
      return true;
    }
    const select = target.closest("[data-select]");
    if (select && root.contains(select)) {
      onSelect(select.getAttribute("data-select"));
      return true;
    }
    return false;
  };
  const onClick = (event) => {
    if (activate(event.target)) event.preventDefault();
  };
  const onKey = (event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    const el = event.target.closest?.("[data-command],[data-select]");
    if (el && activate(el)) event.preventDefault();
  };
  root.addEventListener("click", onClick);
  root.addEventListener("keydown", onKey);
  return () => {
    root.removeEventListener("click", onClick);
    root.removeEventListener("keydown", onKey);
  };
}

// Keeps keyboard focus on the "same" control across a redraw (same data-command or data-select).
export function refocus(root, previous) {
  if (!previous) return;
  for (const attr of ["data-command", "data-select"]) {
    const value = previous.getAttribute?.(attr);
    if (value === null || value === undefined) continue;
    for (const el of root.querySelectorAll(`[${attr}]`)) {
      if (el.getAttribute(attr) === value) {
        el.focus({ preventScroll: true });
        return;
      }
    }
  }
}

// The shell and every board share one frame: an SVG board and an HTML side panel.
export function boardLayout(container, gameClass) {
  // board-frame, not board: the shell's own box around it is .board (app.css), and the two rules
  // must not meet (a flex .board around this one shrank the drawing to its content's width).
  const root = html("div", { class: `board-frame board-${gameClass}` });
  const style = html("style", { text: BOARD_CSS });
  const figure = html("div", { class: "board-figure" });
  const panel = html("div", { class: "board-panel" });
  root.append(style, figure, panel);
  container.append(root);
  return { root, figure, panel };
}

const BOARD_CSS = `
.board-frame { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: flex-start; font: 14px/1.35 system-ui, sans-serif; color: #1b1b1b; width: 100%; }
.board-figure { flex: 3 1 360px; min-width: 0; }
.board-figure svg { width: 100%; height: auto; max-height: 78vh; display: block; background: #f6f3ea; border-radius: 6px; touch-action: manipulation; }
.board-panel { flex: 1 1 220px; display: flex; flex-direction: column; gap: 0.5rem; min-width: 0; }
.board-panel h3 { font-size: 0.95rem; margin: 0.25rem 0 0; }
.board-row { display: flex; flex-wrap: wrap; gap: 0.35rem; align-items: center; }
.board-button { font: inherit; padding: 0.35rem 0.6rem; border: 1px solid #555; border-radius: 5px; background: #fff; color: #1b1b1b; cursor: pointer; min-height: 2.25rem; text-align: left; }
.board-button:hover { background: #eef4fb; }
.board-button[aria-pressed="true"] { background: #1b1b1b; color: #fff; }
.board-control { cursor: pointer; }
.board-control:focus { outline: none; }
.board-control:focus-visible { outline: 3px solid #1b1b1b; outline-offset: 2px; box-shadow: 0 0 0 6px #ffbf00; }
svg .board-control:focus-visible > .focus-ring, svg .board-control:hover > .focus-ring { stroke: #0072B2; stroke-width: 5; opacity: 1; }
svg .focus-ring { opacity: 0; fill: none; pointer-events: none; }
.board-note { color: #444; font-size: 0.85rem; margin: 0; }
.board-card { display: inline-flex; flex-direction: column; align-items: flex-start; gap: 0.1rem; padding: 0.35rem 0.5rem; border: 2px solid #444; border-radius: 6px; background: #fffdf5; color: #1b1b1b; min-width: 5.5rem; font: inherit; text-align: left; }
.board-card[data-command], .board-card[data-select] { border-style: solid; box-shadow: 0 2px 0 #444; }
.board-card:not([data-command]):not([data-select]) { border-style: dashed; color: #555; }
.board-card[aria-pressed="true"] { border-color: #0072B2; box-shadow: 0 0 0 3px #0072B2 inset; }
.board-card small { color: #555; }
.seat-chip { display: inline-flex; align-items: center; gap: 0.3rem; }
.seat-chip svg { width: 1.1rem; height: 1.1rem; background: none; }
`;

// --- seats: shapes and patterns --------------------------------------------------------------

// <defs> with one fill pattern per seat (used as an overlay on a seat's colour).
export function seatDefs(count = SEAT_COLORS.length) {
  const defs = svg("defs");
  for (let seat = 0; seat < count; seat += 1) defs.append(seatPattern(seat));
  return defs;
}

function seatPattern(seat) {
  const { pattern } = seatStyle(seat);
  const p = svg("pattern", { id: `seat-pattern-${seat}`, patternUnits: "userSpaceOnUse", width: 6, height: 6 });
  const ink = { stroke: "rgba(0,0,0,0.55)", "stroke-width": 1.2, fill: "none" };
  const dot = { fill: "rgba(0,0,0,0.55)" };
  const shapes = {
    solid: [],
    stripes: [svg("path", { d: "M0 3H6", ...ink })],
    dots: [svg("circle", { cx: 3, cy: 3, r: 1.2, ...dot })],
    grid: [svg("path", { d: "M3 0V6M0 3H6", ...ink })],
    waves: [svg("path", { d: "M0 4Q1.5 1 3 4T6 4", ...ink })],
    checks: [svg("rect", { x: 0, y: 0, width: 3, height: 3, ...dot }), svg("rect", { x: 3, y: 3, width: 3, height: 3, ...dot })],
    diagonal: [svg("path", { d: "M0 6L6 0", ...ink })],
    rings: [svg("circle", { cx: 3, cy: 3, r: 1.8, ...ink })],
  };
  return append(p, shapes[pattern] || []);
}

// The seat's shape as an SVG element centred at (cx, cy) with radius r.
export function seatShape(seat, cx, cy, r, extra = {}) {
  const { color, shape } = seatStyle(seat);
  const paint = { fill: color, stroke: "#1b1b1b", "stroke-width": Math.max(1, r / 6), ...extra };
  const pts = (list) => list.map(([x, y]) => `${(cx + x * r).toFixed(2)},${(cy + y * r).toFixed(2)}`).join(" ");
  const star = [];
  for (let i = 0; i < 10; i += 1) {
    const a = -Math.PI / 2 + (i * Math.PI) / 5;
    const k = i % 2 ? 0.45 : 1;
    star.push([Math.cos(a) * k, Math.sin(a) * k]);
  }
  const hex = [];
  for (let i = 0; i < 6; i += 1) hex.push([Math.cos((i * Math.PI) / 3), Math.sin((i * Math.PI) / 3)]);
  switch (shape) {
    case "square": return svg("rect", { x: cx - r * 0.85, y: cy - r * 0.85, width: r * 1.7, height: r * 1.7, ...paint });
    case "triangle": return svg("polygon", { points: pts([[0, -1], [0.95, 0.75], [-0.95, 0.75]]), ...paint });
    case "diamond": return svg("polygon", { points: pts([[0, -1], [1, 0], [0, 1], [-1, 0]]), ...paint });
    case "star": return svg("polygon", { points: pts(star), ...paint });
    case "hexagon": return svg("polygon", { points: pts(hex), ...paint });
    case "cross": return svg("polygon", { points: pts([[-0.35, -1], [0.35, -1], [0.35, -0.35], [1, -0.35], [1, 0.35], [0.35, 0.35], [0.35, 1], [-0.35, 1], [-0.35, 0.35], [-1, 0.35], [-1, -0.35], [-0.35, -0.35]]), ...paint });
    case "ring": return svg("circle", { cx, cy, r: r * 0.8, ...paint, "stroke-width": r / 3, fill: "none", stroke: color });
    default: return svg("circle", { cx, cy, r: r * 0.9, ...paint });
  }
}

// A small inline legend chip for HTML: the seat's shape in its colour and its label.
export function seatChip(seat, text) {
  const icon = svg("svg", { viewBox: "-10 -10 20 20", "aria-hidden": "true" }, [seatShape(seat, 0, 0, 8)]);
  return html("span", { class: "seat-chip" }, [icon, text ?? seatStyle(seat).label]);
}

// A follower (meeple) of a seat: coloured, patterned, with the seat's shape on its chest.
// lying: a farmer (on its back); scale: 1.35 for a large follower; badge: a letter (K, F).
const MEEPLE = "M0,-10 C3.2,-10 4.6,-7.6 4.2,-5 L10,-2.6 C11.6,-1.8 11,0.6 9.2,0.4 L5.4,0 L9.6,9.4 C10,10.4 9.4,11 8.4,11 L2.6,11 L0,6 L-2.6,11 L-8.4,11 C-9.4,11 -10,10.4 -9.6,9.4 L-5.4,0 L-9.2,0.4 C-11,0.6 -11.6,-1.8 -10,-2.6 L-4.2,-5 C-4.6,-7.6 -3.2,-10 0,-10 Z";

export function meeple(seat, x, y, { size = 1, lying = false, badge = null, label = "" } = {}) {
  const { color } = seatStyle(seat);
  const turn = lying ? " rotate(-90)" : "";
  const g = svg("g", { class: "meeple", transform: `translate(${x.toFixed(2)},${y.toFixed(2)}) scale(${size})${turn}` });
  if (label) g.append(title(label));
  g.append(svg("path", { d: MEEPLE, fill: color, stroke: "#111", "stroke-width": 1.1 }));
  g.append(svg("path", { d: MEEPLE, fill: `url(#seat-pattern-${seat})`, stroke: "none" }));
  g.append(seatShape(seat, 0, 2.6, 2.6, { fill: "#fff", "stroke-width": 0.6 }));
  if (badge) {
    g.append(svg("text", { x: 0, y: -5.2, "text-anchor": "middle", "font-size": 5.5, "font-weight": 700, fill: "#111", text: badge }));
  }
  return g;
}

// --- tiles drawn from port data -----------------------------------------------------------
// A tile is 100 x 100 centred on (0, 0); ports 0..11 run clockwise from the north-west corner,
// three per side. A rotation r (clockwise degrees) moves port p to (p + 3r/90) mod 12, the
// same as SVG's rotate(r) in a y-down frame.

export const TILE = 100;
const HALF = TILE / 2;

export function perimeterPoint(t) {
  const u = ((t % 12) + 12) % 12;
  const side = Math.floor(u / 3);
  const f = (u - side * 3) / 3;
  switch (side) {
    case 0: return [-HALF + f * TILE, -HALF];
    case 1: return [HALF, -HALF + f * TILE];
    case 2: return [HALF - f * TILE, HALF];
    default: return [-HALF, HALF - f * TILE];
  }
}

export const portMidpoint = (p) => perimeterPoint(p + 0.5);

export function rotatePoint([x, y], rotation) {
  switch (((rotation % 360) + 360) % 360) {
    case 90: return [-y, x];
    case 180: return [-x, -y];
    case 270: return [y, -x];
    default: return [x, y];
  }
}

// The segment at each board port of a tile lying at `rotation` (the engine's Tile.rotated).
export function rotatedPorts(geometry, rotation) {
  const q = Math.round(rotation / 90) % 4;
  return geometry.ports.map((_, p) => geometry.ports[(((p - 3 * q) % 12) + 12) % 12]);
}

// The segment a follower spot names: a board port name, or a port-less segment's name.
export function segmentAtSpot(geometry, rotation, at, portNames) {
  const port = portNames.indexOf(at);
  if (port >= 0) return rotatedPorts(geometry, rotation)[port];
  const index = geometry.segments.findIndex((s, i) => s.attrs.name === at && !geometry.ports.includes(i));
  return index >= 0 ? index : null;
}

const segmentPorts = (geometry, index) => geometry.ports.flatMap((s, p) => (s === index ? [p] : []));

// Cyclic runs of consecutive ports: [[start, length], ...].
function runsOf(ports) {
  if (ports.length === 12) return [[0, 12]];
  const set = new Set(ports);
  const runs = [];
  for (const p of ports) {
    if (set.has((p + 11) % 12)) continue;
    let len = 1;
    while (set.has((p + len) % 12)) len += 1;
    runs.push([p, len]);
  }
  return runs.sort((a, b) => a[0] - b[0]);
}

const lerp = ([ax, ay], [bx, by], k) => [ax + (bx - ax) * k, ay + (by - ay) * k];
const fmt = ([x, y]) => `${x.toFixed(2)} ${y.toFixed(2)}`;

function perimeterPath(from, to) {
  // Along the edge from perimeter position `from` to `to` (to > from), through the corners.
  const out = [];
  for (let c = Math.floor(from / 3) * 3 + 3; c < to; c += 3) out.push(perimeterPoint(c));
  out.push(perimeterPoint(to));
  return out;
}

// The outline of an area segment (a city, a house...) over its ports, as an SVG path.
export function areaPath(ports) {
  const runs = runsOf(ports);
  if (runs.length === 1 && runs[0][1] === 12) return `M${-HALF} ${-HALF}H${HALF}V${HALF}H${-HALF}Z`;
  let d = "";
  runs.forEach(([start, len], i) => {
    const end = start + len;
    const edge = perimeterPath(start, end);
    d += i === 0 ? `M${fmt(perimeterPoint(start))}` : "";
    d += edge.map((pt) => `L${fmt(pt)}`).join("");
    const [nextStart] = runs[(i + 1) % runs.length];
    const gapEnd = nextStart <= start && runs.length > 1 ? nextStart + 12 : runs.length === 1 ? start + 12 : nextStart;
    const gap = gapEnd - end;
    const gapMid = perimeterPoint(end + gap / 2);
    const bulge = runs.length > 1 ? 0.6 : len <= 3 ? 0.8 : 1.15;
    const control = lerp(gapMid, [0, 0], bulge);
    d += `Q${fmt(control)} ${fmt(perimeterPoint(gapEnd))}`;
  });
  return `${d}Z`;
}

// Where a segment's follower stands (tile frame, before rotation).
export function segmentAnchor(geometry, index, lineKinds) {
  const seg = geometry.segments[index];
  const ports = segmentPorts(geometry, index);
  // Port-less pieces (a monastery, a chapel) are drawn in the middle: their follower stands beside.
  if (!ports.length) return seg.attrs.name === "inner_field" ? [0, 0] : [22, 24];
  if (lineKinds.has(seg.kind)) {
    if (ports.length === 1) return lerp(portMidpoint(ports[0]), [0, 0], 0.42);
    if (ports.length === 2) {
      const [a, b] = ports.map(portMidpoint);
      return [0.25 * a[0] + 0.25 * b[0], 0.25 * a[1] + 0.25 * b[1]];
    }
    return lerp(portMidpoint(ports[0]), [0, 0], 0.5);
  }
  const mids = ports.map(portMidpoint);
  const avg = [mids.reduce((s, m) => s + m[0], 0) / mids.length, mids.reduce((s, m) => s + m[1], 0) / mids.length];
  if (Math.hypot(avg[0], avg[1]) < 8) return ports.length === 12 ? [-22, 22] : [-30, 30];
  const runs = runsOf(ports);
  if (runs.length === 1 && runs[0][1] <= 6) {
    const [start, len] = runs[0];
    return lerp(perimeterPoint(start + len / 2), [0, 0], len <= 3 ? 0.32 : 0.45);
  }
  return lerp(avg, [0, 0], 0.35);
}

// Draws one tile (tile frame) with a game's palette: background, areas, lines, symbols.
// style = { background, areas: {kind: {fill, stroke}}, lines: {kind: {color, edge, width}},
//           symbols(geometry, index, anchor) -> [elements] }
export function drawTile(geometry, style) {
  const g = svg("g", { class: "tile-art" });
  g.append(svg("rect", { x: -HALF, y: -HALF, width: TILE, height: TILE, fill: style.background, stroke: "none" }));
  const order = geometry.segments.map((s, i) => i);
  for (const i of order) {
    const seg = geometry.segments[i];
    const area = style.areas[seg.kind];
    const ports = segmentPorts(geometry, i);
    if (!area || !ports.length) continue;
    g.append(svg("path", { d: areaPath(ports), fill: area.fill, stroke: area.stroke, "stroke-width": 2, "stroke-linejoin": "round" }));
  }
  for (const i of order) {
    const seg = geometry.segments[i];
    const line = style.lines[seg.kind];
    const ports = segmentPorts(geometry, i);
    if (!line || !ports.length) continue;
    const d = linePath(ports);
    g.append(svg("path", { d, fill: "none", stroke: line.edge, "stroke-width": line.width + 4, "stroke-linecap": "butt" }));
    g.append(svg("path", { d, fill: "none", stroke: line.color, "stroke-width": line.width, "stroke-linecap": "butt" }));
  }
  for (const i of order) {
    for (const el of style.symbols(geometry, i, segmentAnchor(geometry, i, new Set(Object.keys(style.lines))))) g.append(el);
  }
  g.append(svg("rect", { x: -HALF, y: -HALF, width: TILE, height: TILE, fill: "none", stroke: "rgba(0,0,0,0.35)", "stroke-width": 1 }));
  return g;
}

function linePath(ports) {
  const mids = ports.map(portMidpoint);
  if (mids.length === 2) return `M${fmt(mids[0])}Q0 0 ${fmt(mids[1])}`;
  return mids.map((m) => `M${fmt(m)}L0 0`).join("");
}

// One tile placed at board cell (x, y) with its rotation, in a board of TILE-sized cells.
export function placedTile(geometry, x, y, rotation, style) {
  const g = svg("g", { transform: `translate(${x * TILE + HALF},${y * TILE + HALF})` });
  const art = drawTile(geometry, style);
  art.setAttribute("transform", `rotate(${rotation})`);
  g.append(art);
  return g;
}

// Board coordinates of a segment's anchor for a tile at (x, y) with `rotation`.
export function anchorOnBoard(geometry, segment, x, y, rotation, lineKinds) {
  const [ax, ay] = rotatePoint(segmentAnchor(geometry, segment, lineKinds), rotation);
  return [x * TILE + HALF + ax, y * TILE + HALF + ay];
}

// A focusable SVG hit area: a shape, plus a ring that shows on focus and hover.
export function hitArea(shapeTag, attrs) {
  const g = svg("g");
  g.append(svg(shapeTag, attrs));
  g.append(svg(shapeTag, { ...attrs, class: "focus-ring", fill: "none" }));
  return g;
}

export function viewBoxOf(cells, margin = 0.3) {
  const xs = cells.map(([x]) => x);
  const ys = cells.map(([, y]) => y);
  let minX = Math.min(...xs) - margin, maxX = Math.max(...xs) + 1 + margin;
  let minY = Math.min(...ys) - margin, maxY = Math.max(...ys) + 1 + margin;
  // A board of a few tiles is not blown up to the whole figure: at least 5 cells each way.
  const padX = Math.max(0, 5 - (maxX - minX)) / 2, padY = Math.max(0, 5 - (maxY - minY)) / 2;
  minX -= padX; maxX += padX; minY -= padY; maxY += padY;
  return `${minX * TILE} ${minY * TILE} ${(maxX - minX) * TILE} ${(maxY - minY) * TILE}`;
}

// Lists, in words, the seats: "seat 0 (orange circle) 12".
export function scoreLine(scores) {
  return scores.map(({ seat, points }) => `${seatStyle(seat).label}: ${points}`).join(", ");
}

export function seatName(seat, ctx) {
  const entry = ctx?.seats?.find?.((s) => s.seat === seat);
  const name = entry?.name;
  return name ? `${name} (seat ${seat})` : `seat ${seat}`;
}

// The service's own events (game.*), in words; null for an engine event.
export function describeServiceEvent(event) {
  const p = event.payload || {};
  switch (event.type) {
    case "game.created": return `A game for ${p.seats} players is created.`;
    case "game.seat_taken": return p.bot ? `Seat ${p.seat + 1} is played by the ${p.bot} bot.` : `${p.name} sits down.`;
    case "game.finished": return "The game is over; the seed is revealed for audit.";
    case "clock.expired": return `${who(p.seat)} runs out of time.`;
    case "seat.left": return `${who(p.seat)} ${p.reason === "timeout" ? "is out of time" : "resigns"}${p.bot ? `; the ${p.bot} bot plays on` : ""}.`;
    case "move.undone": return `${who(p.seat)} takes back the last move.`;
    case "game.rematch": return "A rematch is set up.";
    default: return event.type.includes(".") ? event.type.replace(/[._]/g, " ") : null;
  }
}

export const who = (seat) => (seat === null || seat === undefined ? "nobody" : seatStyle(seat).label);

export function list(items) {
  const parts = items.map(String);
  if (parts.length <= 1) return parts.join("");
  return `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}

// --- motion: what changed since the last drawing settles into place --------------------------
// A board redraws its whole SVG on every update; lasting things (a tile, a follower, a keep, a
// score marker, a monster, a wall) carry data-anim (a key that names them across drawings) and,
// when they can move, data-anim-at ("x,y" in the board's units). settle() compares the new drawing
// with the positions taken from the old one: a new key drops in and fades in, a moved one glides
// from where it was. It animates CSS `translate` and `opacity`, never `transform`, so the SVG
// transform attributes the drawing relies on stay untouched; nothing changes pointer-events, so a
// control is clickable at once (it just may still be moving). While it runs an element has the class
// `arriving` or `moving`, for styles that want to tell.

export const MOTION_MS = 420;

export function animKey(node, key, at = null) {
  node.setAttribute("data-anim", key);
  if (at) node.setAttribute("data-anim-at", `${at[0].toFixed(1)},${at[1].toFixed(1)}`);
  return node;
}

const reducedMotion = () => Boolean(globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches);

// How long this update's motion lasts: 0 for people who asked for less motion, for the first
// drawing and for replay jumps; the shell passes state.motion (ms), else live updates get MOTION_MS.
export function motionOf(state) {
  if (reducedMotion() || !state || !state.previousView) return 0;
  if (typeof state.motion === "number") return Math.max(0, state.motion);
  return state.live === false ? 0 : MOTION_MS;
}

// Where each keyed thing of a drawing is: key -> [x, y] or null (no position given).
export function animPositions(root) {
  const out = new Map();
  for (const el of root.querySelectorAll("[data-anim]")) {
    const at = el.getAttribute("data-anim-at");
    out.set(el.getAttribute("data-anim"), at ? at.split(",").map(Number) : null);
  }
  return out;
}

// What the last drawing animated is kept on root (data-arrived, data-glided): a hook for the tests.
export function settle(root, before, ms) {
  let arrived = 0, glided = 0;
  const animate = ms > 0 && before && typeof Element.prototype.animate === "function";
  for (const el of animate ? root.querySelectorAll("[data-anim]") : []) {
    const key = el.getAttribute("data-anim");
    if (!before.has(key)) {
      arrived += 1;
      el.classList.add("arriving");
      const run = el.animate([{ opacity: 0, translate: "0px -18px" }, { opacity: 1, translate: "0px 0px" }],
        { duration: ms, easing: "cubic-bezier(.2,.8,.3,1)" });
      run.onfinish = () => el.classList.remove("arriving");
      continue;
    }
    const was = before.get(key);
    const at = el.getAttribute("data-anim-at");
    if (!was || !at) continue;
    const [x, y] = at.split(",").map(Number);
    const dx = was[0] - x, dy = was[1] - y;
    if (Math.hypot(dx, dy) < 0.5) continue;
    glided += 1;
    el.classList.add("moving");
    const run = el.animate([{ translate: `${dx}px ${dy}px` }, { translate: "0px 0px" }], { duration: ms, easing: "ease-in-out" });
    run.onfinish = () => el.classList.remove("moving");
  }
  root.setAttribute("data-arrived", String(arrived));
  root.setAttribute("data-glided", String(glided));
}

// Replaces a board's drawing with the next one and lets what changed settle (see above).
export function redraw(figure, drawing, state, animate) {
  const had = figure.firstElementChild !== null;
  const before = animate && had ? animPositions(figure) : null;
  figure.replaceChildren(drawing);
  if (animate) settle(figure, before, motionOf(state));
}
