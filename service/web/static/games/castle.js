// Carcassonne: The Castle (with the Falcon): the interior and its start spaces, tiles drawn from
// GET /games/catalog/castle/assets, the wall's scoring track with towers and gates, keeps, aeries.

import { TILE, describeServiceEvent, html, list, placedTile, seatChip, seatShape, svg, title, who } from "./common.js";
import { createTileBoard } from "./tileboard.js";

const STYLE = {
  background: "#cfdc9c",
  areas: {
    house: { fill: "#c4553f", stroke: "#5e1f12" },
    tower: { fill: "#7f8fa6", stroke: "#2f3a4a" },
    chapel: { fill: "#b48fd0", stroke: "#4b2a66" },
  },
  lines: { path: { color: "#efe4c8", edge: "#7d6b4d", width: 8 } },
  symbols,
};
const LINE_KINDS = new Set(["path"]);
const ROLE_WORDS = { path: "herald", house: "squire", tower: "knight", court: "merchant", chapel: "preacher" };

function symbols(geometry, index, [ax, ay]) {
  const seg = geometry.segments[index];
  const out = [];
  const ports = geometry.ports.filter((p) => p === index).length;
  if (index === 0 && geometry.segments.some((s) => s.attrs.end === "square")) {
    out.push(svg("circle", { cx: 0, cy: 0, r: 12, fill: "#f4ecd6", stroke: "#7d6b4d", "stroke-width": 2 }));
  }
  if (seg.kind === "path" && seg.attrs.fountain) {
    out.push(svg("circle", { cx: ax, cy: ay, r: 6, fill: "#3d8fd1", stroke: "#14466e", "stroke-width": 1.5 }));
  }
  if (seg.kind === "chapel" && !ports) {
    out.push(svg("rect", { x: -12, y: -10, width: 24, height: 22, fill: "#b48fd0", stroke: "#4b2a66", "stroke-width": 2 }));
    out.push(svg("path", { d: "M0 -22V-12M-5 -18H5", stroke: "#4b2a66", "stroke-width": 2.5 }));
  }
  if (seg.kind === "tower" && ports) {
    out.push(svg("path", { d: `M${ax - 8} ${ay - 4}h4v-4h4v4h4v-4h4v4h0v10h-16z`, fill: "#4d5a6e", stroke: "#1f2733", "stroke-width": 1 }));
  }
  if (seg.kind === "house" && ports) {
    out.push(svg("polygon", { points: `${ax - 8},${ay} ${ax},${ay - 8} ${ax + 8},${ay}`, fill: "#7a2a1b" }));
  }
  if (seg.attrs.markets) {
    for (let i = 0; i < seg.attrs.markets; i += 1) {
      const mx = ax + i * 14 - 6, my = ay + 12;
      out.push(svg("rect", { x: mx - 7, y: my - 4, width: 14, height: 10, fill: "#f7f1dc", stroke: "#6b4a12", "stroke-width": 1.2 }));
      out.push(svg("path", { d: `M${mx - 8} ${my - 4}l2-5h12l2 5z`, fill: "#e1a93b", stroke: "#6b4a12", "stroke-width": 1 }));
    }
  }
  for (let i = 0; i < (seg.attrs.aeries || 0); i += 1) {
    const bx = ax + 12 + i * 10, by = ay - 12;
    out.push(svg("circle", { cx: bx, cy: by, r: 6, fill: "#fff8e0", stroke: "#5a4520", "stroke-width": 1.2 }));
    out.push(svg("path", { d: `M${bx - 4} ${by}q2-3 4 0q2-3 4 0`, fill: "none", stroke: "#5a4520", "stroke-width": 1.5 }));
  }
  return out;
}

function interiorCells(view) {
  const cells = [];
  (view.interior || []).forEach((row, y) => [...row].forEach((ch, x) => ch === "#" && cells.push([x, y])));
  return cells;
}

function startSpaces(ctx, view) {
  const key = view.options?.falcon ? "falcon" : "base";
  return ctx.assets?.start_spaces?.[key] || [];
}

// The wall's scoring track: a ring of spaces around the castle, clockwise from the top-left.
function trackLayout(view, length) {
  const cells = [...interiorCells(view), ...(view.start_spaces || []).map((s) => [s.x, s.y])];
  const xs = cells.map(([x]) => x), ys = cells.map(([, y]) => y);
  const left = (Math.min(...xs) - 0.45) * TILE, right = (Math.max(...xs) + 1.45) * TILE;
  const top = (Math.min(...ys) - 0.45) * TILE, bottom = (Math.max(...ys) + 1.45) * TILE;
  const w = right - left, h = bottom - top, perimeter = 2 * (w + h);
  const at = (d) => {
    const u = ((d % perimeter) + perimeter) % perimeter;
    if (u < w) return [left + u, top];
    if (u < w + h) return [right, top + u - w];
    if (u < 2 * w + h) return [right - (u - w - h), bottom];
    return [left, bottom - (u - 2 * w - h)];
  };
  const step = perimeter / length;
  return { position: (space) => at((space + 0.5) * step), between: (a) => at((a + 1) * step), step, box: [left, top, right, bottom] };
}

function game(ctx) {
  const ports = ctx.assets?.ports || ["Nw", "N", "Ne", "En", "E", "Es", "Se", "S", "Sw", "Ws", "W", "Wn"];
  const geometryOf = (id) => ctx.assets?.tiles?.[id] || null;
  const length = ctx.assets?.track_length || 100;
  return {
    id: "castle",
    ports,
    style: STYLE,
    lineKinds: LINE_KINDS,
    geometryOf,
    placedTiles: (view) => (view.board || []).flatMap((b) => {
      const geometry = geometryOf(b.tile);
      return geometry ? [{ ...b, id: b.tile, geometry }] : [];
    }),
    placedCell: (view) => view.placed || null,
    extraCells: (view) => {
      const cells = [...interiorCells(view), ...(view.start_spaces || []).map((s) => [s.x, s.y])];
      if (!cells.length) return [];
      const xs = cells.map(([x]) => x), ys = cells.map(([, y]) => y);
      return [[Math.min(...xs) - 1, Math.min(...ys) - 1], [Math.max(...xs) + 1, Math.max(...ys) + 1]];
    },
    margin: 0.1,
    background: (view) => background(ctx, view),
    overlay: (view) => [...keeps(view), ...overlay(view, trackLayout(view, length))],
    boardLabel: (view) => `The Castle: ${(view.board || []).length} tiles placed, ${view.remaining} castle tiles left`,
    tileLabel: (t) => `tile ${t.id} at ${t.x}, ${t.y}, turned ${t.rotation}°` +
      (t.followers.length ? `; ${t.followers.map((f) => `${who(f.seat)} ${f.kind} ${f.role} on ${f.at}`).join("; ")}` : ""),
    followerLook: (f) => ({ size: f.kind === "prince" ? 1.3 : 1, badge: f.kind === "prince" ? "K" : f.kind === "falconer" ? "F" : null }),
    followerLabel: (f, kind, t) => `${who(f.seat)}: ${f.kind === "normal" ? "" : `${f.kind} `}${f.role} on the ${kind} of ${t.id} at ${t.x}, ${t.y}`,
    spotOf: (c) => (c.type === "place_follower" ? c.args.at : c.type === "score" ? c.args.feature : null),
    spotMarker: (c) => {
      if (c.type === "score") return { r: 11, text: "★" };
      return { r: c.args.kind === "normal" ? 9 : 11, text: { normal: "+", prince: "K", falconer: "F" }[c.args.kind] || "+" };
    },
    commandLabel: (c, kind) => commandLabel(c, kind),
    tileNote: (view) => `Tile ${view.tile} to place; ${view.remaining} castle tiles left.`,
    panel: (view) => panel(view),
  };
}

function commandLabel(c, kind) {
  const a = c.args || {};
  switch (c.type) {
    case "place_follower": {
      const piece = a.kind === "prince" ? "the king" : a.kind === "falconer" ? "the falconer" : "a follower";
      return `place ${piece} as ${a.role || ROLE_WORDS[kind] || "follower"} on the ${kind || "feature"} at ${a.at}`;
    }
    case "pass": return "place no follower (pass)";
    case "score": return `score the ${kind || "feature"} at ${a.feature} next`;
    case "use_wall_tile": return a.target ? `use wall tile ${a.tile.replace(/_/g, " ")} on the feature at ${a.target}` : `use wall tile ${a.tile.replace(/_/g, " ")}`;
    case "end_turn": return "end the turn (keep the wall tile)";
    default: return `${c.type} ${JSON.stringify(a)}`;
  }
}

function background(ctx, view) {
  const out = [];
  const cells = interiorCells(view);
  if (!cells.length) return out;
  const layout = trackLayout(view, ctx.assets?.track_length || 100);
  const [left, top, right, bottom] = layout.box;
  const pad = layout.step * 0.6;
  out.push(svg("rect", { x: left - pad, y: top - pad, width: right - left + 2 * pad, height: bottom - top + 2 * pad, rx: 20, fill: "#8c8577", stroke: "#4a4539", "stroke-width": 4 }));
  out.push(svg("rect", { x: left + pad, y: top + pad, width: right - left - 2 * pad, height: bottom - top - 2 * pad, rx: 10, fill: "#a59d8c" }));
  for (const [x, y] of cells) {
    out.push(svg("rect", { x: x * TILE, y: y * TILE, width: TILE, height: TILE, fill: "#efe7d2", stroke: "#b9ae94", "stroke-width": 1.5 }));
  }
  for (const space of startSpaces(ctx, view)) {
    const g = placedTile(space.tile, space.x, space.y, 0, { ...STYLE, background: "#b9b09c" });
    g.append(title(`start space ${space.id}${space.gate ? " (on a gate)" : ""}`));
    g.append(svg("text", { x: 0, y: -30, "text-anchor": "middle", "font-size": 14, "font-weight": 700, fill: "#2b2720", text: space.id }));
    out.push(g);
  }
  return out;
}

const seatStroke = (seat) => ({ 0: "#E69F00", 1: "#56B4E9" }[seat] || "#444");

function keeps(view) {
  const out = [];
  for (const seat of view.seats || []) {
    if (!seat.keep) continue;
    const g = svg("g", { class: "keep" }, [title(`${who(seat.seat)}'s keep: a house of ${seat.keep.size}`)]);
    for (const [x, y] of seat.keep.tiles) {
      g.append(svg("rect", { x: x * TILE + 6, y: y * TILE + 6, width: TILE - 12, height: TILE - 12, fill: "none", stroke: seatStroke(seat.seat), "stroke-width": 6, "stroke-dasharray": seat.seat ? "4 6" : "14 6" }));
    }
    out.push(g);
  }
  return out;
}

function overlay(view, layout) {
  const g = svg("g", { class: "track" });
  if (!(view.seats || []).length) return [g];
  const towerOf = new Map();
  for (const t of view.towers || []) for (const s of t.spaces) towerOf.set(s, t);
  const size = layout.step * 0.86;
  for (let space = 0; space < Math.round(layout.step ? (2 * ((layout.box[2] - layout.box[0]) + (layout.box[3] - layout.box[1]))) / layout.step : 100); space += 1) {
    const [x, y] = layout.position(space);
    const tower = towerOf.get(space);
    g.append(svg("rect", { x: x - size / 2, y: y - size / 2, width: size, height: size, rx: 3,
      fill: tower ? "#5d5648" : "#d8d0bd", stroke: "#3b362c", "stroke-width": 1 }));
    if (space % 10 === 0) g.append(svg("text", { x, y: y + 5, "text-anchor": "middle", "font-size": 13, "font-weight": 700, fill: tower ? "#fff" : "#2b2720", text: String(space) }));
  }
  for (const tower of view.towers || []) {
    const [a, b] = tower.spaces.map((s) => layout.position(s));
    const cx = (a[0] + b[0]) / 2, cy = (a[1] + b[1]) / 2;
    const t = svg("g", {}, [title(`tower on spaces ${tower.spaces.join("/")}${tower.wall_tile ? ": a face-down wall tile" : ": empty"}`)]);
    if (tower.wall_tile) {
      t.append(svg("rect", { x: cx - 11, y: cy - 11, width: 22, height: 22, rx: 3, fill: "#7a4b1e", stroke: "#fff", "stroke-width": 2 }));
      t.append(svg("text", { x: cx, y: cy + 5, "text-anchor": "middle", "font-size": 14, "font-weight": 700, fill: "#fff", text: "?" }));
    }
    g.append(t);
  }
  for (const [a] of view.gates || []) {
    const [x, y] = layout.between(a);
    g.append(svg("g", {}, [title(`gate between ${a} and ${a + 1}`),
      svg("rect", { x: x - 9, y: y - 9, width: 18, height: 18, fill: "#2b2720" }),
      svg("path", { d: `M${x - 6} ${y + 9}v-8a6 6 0 0 1 12 0v8z`, fill: "#d8d0bd" })]));
  }
  const bySpace = new Map();
  for (const seat of view.seats) {
    const key = seat.at_gate ? `g${seat.at_gate[0]}` : `s${seat.space}`;
    bySpace.set(key, [...(bySpace.get(key) || []), seat]);
  }
  for (const [key, seats] of bySpace) {
    seats.forEach((seat, i) => {
      const [x, y] = key.startsWith("g") ? layout.between(Number(key.slice(1))) : layout.position(seat.space);
      const marker = seatShape(seat.seat, x + (i - (seats.length - 1) / 2) * 16, y - 16, 9);
      marker.append(title(`${who(seat.seat)}: ${seat.score} points (space ${seat.space}, lap ${seat.lap})`));
      g.append(marker);
    });
  }
  return [g];
}

function panel(view) {
  if (!view.seats) return [html("h3", { text: "The Castle" })];
  const out = [html("h3", { text: `The Castle${view.options?.falcon ? " with the Falcon" : ""}` })];
  const phase = { place_tile: "placing a tile", place_follower: "placing a follower", score: "choosing what to score",
    end_turn: "ending the turn", over: "game over" }[view.phase] || view.phase;
  out.push(html("p", { class: "board-note", text: `Turn ${view.turn}; phase: ${phase}. ${view.wall_tiles_on_towers} wall tiles on towers.` }));
  for (const seat of view.seats) {
    const supply = seat.supply || {};
    const extras = [supply.prince ? "king" : null, supply.falconer ? "falconer" : null].filter(Boolean);
    const parts = [`${seat.score} points`, `followers ${supply.normal}${extras.length ? ` + ${extras.join(", ")}` : ""}`];
    if (seat.keep) parts.push(`keep ${seat.keep.size}`);
    if (seat.aeries !== undefined) parts.push(`aeries ${seat.aeries}`);
    if (seat.wall_tiles.length) parts.push(`wall tiles: ${seat.wall_tiles.map((w) => w.tile.replace(/_/g, " ")).join(", ")}`);
    if (view.active === seat.seat) parts.push("◀ to play");
    out.push(html("div", { class: "board-row" }, [seatChip(seat.seat), html("span", { text: parts.join(" · ") })]));
  }
  if (view.aerie_supply !== undefined) out.push(html("p", { class: "board-note", text: `Aerie tokens in the supply: ${view.aerie_supply}.` }));
  for (const p of view.pending || []) {
    out.push(html("p", { class: "board-note", text: `To score: ${p.kind} of ${p.tiles} tiles at ${p.feature} for ${list(p.scorers.map(who)) || "nobody"}${p.doubled ? " (doubled)" : ""}.` }));
  }
  if (view.phase === "over") out.push(html("p", { class: "board-note", text: `Winners: ${list((view.winners || []).map(who))}.` }));
  return out;
}

export function createBoard(container, ctx) {
  return createTileBoard(container, ctx, game(ctx));
}

export function describeEvent(event, ctx) {
  const service = describeServiceEvent(event);
  if (service !== null) return service;
  const p = event.payload || {};
  switch (event.type) {
    case "game_started": return `The game starts with ${p.tiles} castle tiles (dataset ${p.dataset}).`;
    case "tile_drawn": return `${who(p.seat)} draws castle tile ${p.tile}.`;
    case "tile_set_aside": return `Tile ${p.tile} fits nowhere and is set aside.`;
    case "tile_placed": return `${who(p.seat)} places tile ${p.tile} at ${p.x}, ${p.y}, turned ${p.rotation}°.`;
    case "follower_placed": return `${who(p.seat)} places ${p.kind === "normal" ? "a follower" : `the ${p.kind}`} as ${p.role} on ${p.at} of the tile at ${p.x}, ${p.y}.`;
    case "follower_passed": return `${who(p.seat)} places no follower.`;
    case "feature_scored": return `The ${p.kind} of ${p.tiles?.length} tiles is scored: ${(p.points || []).map((n, s) => `${who(s)} ${n}`).join(", ")}.`;
    case "marker_moved": return `${who(p.seat)}'s marker moves ${p.points} from ${p.from} to ${p.to}${p.gate !== null && p.gate !== undefined ? ` and halts at a gate (${p.lost} lost)` : ""}.`;
    case "wall_tile_taken": return `${who(p.seat)} takes the wall tile on tower ${p.spaces?.join("/")}: ${String(p.tile).replace(/_/g, " ")}.`;
    case "wall_tile_used": return `${who(p.seat)} uses the wall tile ${String(p.tile).replace(/_/g, " ")}${p.target ? ` on ${p.target}` : ""}.`;
    case "aeries_taken": return `${who(p.seat)} takes ${p.count} aerie token${p.count === 1 ? "" : "s"}.`;
    case "aeries_returned": return `Both players hand back ${p.each} aerie token${p.each === 1 ? "" : "s"}.`;
    case "keep_moved": return `${who(p.seat)}'s keep moves to a house of ${p.size}.`;
    case "followers_returned": return `${(p.followers || []).length} follower${(p.followers || []).length === 1 ? "" : "s"} return to their owners.`;
    case "turn_ended": return p.extra_turn ? `${who(p.seat)} plays an extra turn.` : `${who(p.seat)}'s turn ends; ${who(p.next)} is next.`;
    case "final_scored": return `Final scoring (${String(p.item).replace(/_/g, " ")}): ${who(p.seat)} scores ${p.points}.`;
    case "game_ended": return `The game ends: ${(p.scores || []).map((s, i) => `${who(i)} ${s}`).join(", ")}; ${list((p.winners || []).map(who))} win${(p.winners || []).length === 1 ? "s" : ""}.`;
    default: return `${event.type} ${JSON.stringify(p)}`;
  }
}

export function summary(view, ctx) {
  const scores = (view.scores || []).map((points, seat) => ({ seat, points }));
  const over = view.phase === "over";
  const turn = over ? null : view.active ?? null;
  const text = over ? `Game over; ${list((view.winners || []).map(who))} won.`
    : turn === null ? "Waiting for the game to start." : `${who(turn)} to play; ${view.remaining} castle tiles left.`;
  return { scores, turn, text };
}
