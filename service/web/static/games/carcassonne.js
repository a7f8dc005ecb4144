// Carcassonne (with Inns & Cathedrals): tiles drawn from GET /games/catalog/carcassonne/assets.

import { describeServiceEvent, html, list, seatChip, svg, who } from "./common.js";
import { createTileBoard } from "./tileboard.js";

const STYLE = {
  background: "#86b94f",
  areas: { city: { fill: "#d8a15a", stroke: "#7a4b1e" } },
  lines: { road: { color: "#f6f1e3", edge: "#5f513f", width: 7 } },
  symbols,
};
const LINE_KINDS = new Set(["road"]);

function symbols(geometry, index, [ax, ay]) {
  const seg = geometry.segments[index];
  const out = [];
  if (seg.kind === "monastery") {
    out.push(svg("rect", { x: -13, y: -8, width: 26, height: 22, fill: "#c0563b", stroke: "#3b1d12", "stroke-width": 2 }));
    out.push(svg("polygon", { points: "-16,-8 0,-22 16,-8", fill: "#7d2e1c", stroke: "#3b1d12", "stroke-width": 2 }));
    out.push(svg("rect", { x: -3, y: 3, width: 6, height: 11, fill: "#3b1d12" }));
  }
  if (seg.kind === "city" && seg.attrs.pennant) {
    out.push(svg("path", { d: `M${ax + 9} ${ay - 15}h12v8c0 5-6 8-6 8s-6-3-6-8z`, fill: "#2c5aa0", stroke: "#fff", "stroke-width": 1.5 }));
  }
  if (seg.kind === "city" && seg.attrs.cathedral) {
    out.push(svg("rect", { x: -10, y: -6, width: 20, height: 18, fill: "#e9e2d0", stroke: "#3d3323", "stroke-width": 2 }));
    out.push(svg("polygon", { points: "-4,-6 0,-24 4,-6", fill: "#3d3323" }));
    out.push(svg("path", { d: "M-10 -6 L0 -14 L10 -6", fill: "none", stroke: "#3d3323", "stroke-width": 2 }));
  }
  if (seg.kind === "road" && seg.attrs.inn) {
    const [ix, iy] = [ax * 0.55 + (ay === 0 ? 0 : 14), ay * 0.55 + (ay === 0 ? 14 : 0)];
    out.push(svg("ellipse", { cx: ix + 6, cy: iy + 6, rx: 9, ry: 5, fill: "#4f8fcf", stroke: "#24507d", "stroke-width": 1 }));
    out.push(svg("rect", { x: ix - 7, y: iy - 6, width: 12, height: 9, fill: "#f1e3c2", stroke: "#5a3a17", "stroke-width": 1.5 }));
    out.push(svg("polygon", { points: `${ix - 9},${iy - 6} ${ix - 1},${iy - 13} ${ix + 7},${iy - 6}`, fill: "#b3452c" }));
  }
  if (index === 0 && villageNeeded(geometry)) {
    out.push(svg("rect", { x: -9, y: -7, width: 18, height: 14, fill: "#f1e3c2", stroke: "#5a3a17", "stroke-width": 2 }));
    out.push(svg("polygon", { points: "-11,-7 0,-15 11,-7", fill: "#b3452c", stroke: "#5a3a17", "stroke-width": 1.5 }));
  }
  return out;
}

function villageNeeded(geometry) {
  if (geometry.segments.some((s) => s.kind === "monastery")) return false;
  const ends = geometry.segments.filter((s, i) => s.kind === "road" && geometry.ports.filter((p) => p === i).length === 1);
  return ends.length >= 2;
}

function geometryOf(assets, tileId, view) {
  if (!assets) return null;
  const junction = view?.options?.junction_inn;
  const variant = assets.variants?.junction_inn?.[junction]?.[tileId];
  return variant || assets.tiles[tileId] || null;
}

const FEATURE_WORDS = { city: "city", road: "road", field: "field (as a farmer)", monastery: "monastery" };

function game(ctx) {
  const ports = ctx.assets?.ports || ["Nw", "N", "Ne", "En", "E", "Es", "Se", "S", "Sw", "Ws", "W", "Wn"];
  return {
    id: "carcassonne",
    ports,
    style: STYLE,
    lineKinds: LINE_KINDS,
    geometryOf: (id, view) => geometryOf(ctx.assets, id, view),
    placedTiles: (view) => (view.board || []).flatMap((b) => {
      const geometry = geometryOf(ctx.assets, b.id, view);
      return geometry ? [{ ...b, geometry }] : [];
    }),
    placedCell: (view) => (view.placed ? [view.placed.x, view.placed.y] : null),
    extraCells: () => [],
    background: () => [],
    overlay: () => [],
    boardLabel: (view) => `Carcassonne board, ${(view.board || []).length} tiles placed`,
    tileLabel: (t) => `tile ${t.id} at ${t.x}, ${t.y}, turned ${t.rotation}°` +
      (t.followers.length ? `; ${t.followers.map((f) => `${who(f.seat)} ${f.kind} on ${f.at}`).join("; ")}` : ""),
    followerLook: (f, kind) => ({ lying: kind === "field", size: f.kind === "large" ? 1.4 : 1, badge: f.kind === "large" ? "L" : null }),
    followerLabel: (f, kind, t) => `${who(f.seat)}: ${f.kind === "large" ? "large follower" : kind === "field" ? "farmer" : "follower"} on the ${kind} of ${t.id} at ${t.x}, ${t.y}`,
    spotOf: (c) => (c.type === "place_follower" ? c.args.at : null),
    spotMarker: (c) => (c.args.kind === "large" ? { r: 12, text: "L" } : { r: 9, text: "+" }),
    commandLabel: (c, kind) => {
      if (c.type === "place_follower") {
        const piece = c.args.kind === "large" ? "the large follower" : "a follower";
        return `place ${piece} on the ${FEATURE_WORDS[kind] || kind || "spot"} at ${c.args.at}`;
      }
      if (c.type === "pass") return "place no follower (pass)";
      return `${c.type} ${JSON.stringify(c.args)}`;
    },
    tileNote: (view) => `Tile ${view.tile} to place; ${view.remaining} left in the pile.`,
    margin: 0.6,
    panel: (view) => panel(view),
  };
}

function panel(view) {
  const rows = (view.scores || []).map((points, seat) => {
    const supply = view.supply?.[seat] || {};
    const large = view.options?.inns_cathedrals ? `, large ${supply.large}` : "";
    const turn = view.current === seat ? " ◀ to play" : "";
    return html("div", { class: "board-row" }, [seatChip(seat), html("span", { text: `${points} points · followers ${supply.normal}${large}${turn}` })]);
  });
  const phase = { place_tile: "placing a tile", place_follower: "placing a follower", over: "game over" }[view.phase] || view.phase;
  const out = [html("h3", { text: "Carcassonne" }), html("p", { class: "board-note", text: `Phase: ${phase}.` }), ...rows];
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
    case "game_started": return `The game starts with ${p.seats} players; tile ${p.start?.tile} lies at the centre.`;
    case "tile_drawn": return `${who(p.seat)} draws tile ${p.tile} (${p.remaining} left).`;
    case "tile_discarded": return `Tile ${p.tile} fits nowhere and leaves the game.`;
    case "tile_placed": return `${who(p.seat)} places tile ${p.tile} at ${p.x}, ${p.y}, turned ${p.rotation}°.`;
    case "follower_placed": return `${who(p.seat)} places ${p.kind === "large" ? "the large follower" : "a follower"} on ${p.at} of the tile at ${p.x}, ${p.y}.`;
    case "follower_skipped": return `${who(p.seat)} places no follower.`;
    case "feature_scored": {
      const what = `${p.final ? "final scoring: " : ""}${p.feature} of ${p.tiles?.length} tiles`;
      if (!p.winners?.length) return `${what} scores nothing.`;
      return `${what} scores ${p.points} for ${list(p.winners.map(who))}.`;
    }
    case "game_ended": return `The game ends: ${(p.scores || []).map((s, i) => `${who(i)} ${s}`).join(", ")}; ${list((p.winners || []).map(who))} win${(p.winners || []).length === 1 ? "s" : ""}.`;
    default: return `${event.type} ${JSON.stringify(p)}`;
  }
}

export function summary(view, ctx) {
  const scores = (view.scores || []).map((points, seat) => ({ seat, points }));
  const turn = view.phase === "over" ? null : view.current ?? null;
  const text = view.phase === "over"
    ? `Game over; ${list((view.winners || []).map(who))} won.`
    : turn === null ? "Waiting for the game to start." : `${who(turn)} to play (${view.phase === "place_follower" ? "follower" : "tile"}); ${view.remaining} tiles left.`;
  return { scores, turn, text };
}
