// The board both tile games share (Carcassonne, The Castle): tiles from the asset route's port
// data, followers, and the placement controls: choose a cell (data-select), then one of the
// rotations drawn in that cell (data-command); follower spots on the placed tile; any other
// legal command as a button in the panel.

import {
  TILE, anchorOnBoard, asCommand, asSelect, boardLayout, commandButton, commandKey, hitArea, html,
  meeple, placedTile, drawTile, refocus, rotatePoint, seatDefs, segmentAtSpot, svg, viewBoxOf, wireControls,
} from "./common.js";

const ROTATION_SLOTS = { 0: [-1, -1], 90: [1, -1], 180: [1, 1], 270: [-1, 1] };

export function createTileBoard(container, ctx, game) {
  const { root, figure, panel } = boardLayout(container, game.id);
  let state = null;
  let selectedCell = null;
  let selectedSpot = null;
  let spotCommands = [];
  let pending = false;
  let byKey = new Map();

  const send = (key) => {
    const command = byKey.get(key);
    if (!command || pending) return;
    pending = true;
    root.setAttribute("aria-busy", "true");
    Promise.resolve(ctx.send(command)).catch(() => {}).finally(() => {
      pending = false;
      root.removeAttribute("aria-busy");
    });
  };
  const unwire = wireControls(root, {
    onCommand: send,
    onSelect: (key) => {
      if (key.startsWith("spot:")) selectedSpot = selectedSpot === key ? null : key;
      else selectedCell = selectedCell === key ? null : key;
      render();
    },
  });
  root.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && (selectedCell || selectedSpot)) {
      selectedCell = null;
      selectedSpot = null;
      render();
    }
  });

  function render() {
    const focused = root.contains(document.activeElement) ? document.activeElement : null;
    const view = state.view;
    const legal = ctx.seat === null || ctx.seat === undefined || state.live === false ? [] : state.legal || [];
    byKey = new Map(legal.map((c) => [commandKey(c), c]));
    figure.replaceChildren(drawBoard(view, legal));
    panel.replaceChildren(...drawPanel(view, legal));
    refocus(root, focused);
  }

  function drawBoard(view, legal) {
    spotCommands = [];
    const placements = legal.filter((c) => c.type === "place_tile");
    const cellsOf = new Map();
    for (const c of placements) {
      const key = `${c.args.x},${c.args.y}`;
      if (!cellsOf.has(key)) cellsOf.set(key, []);
      cellsOf.get(key).push(c);
    }
    if (selectedCell && !cellsOf.has(selectedCell)) selectedCell = null;
    const tiles = game.placedTiles(view);
    const extent = [...tiles.map((t) => [t.x, t.y]), ...game.extraCells(view),
      ...[...cellsOf.values()].map((list) => [list[0].args.x, list[0].args.y])];
    if (!extent.length) extent.push([0, 0]);
    const board = svg("svg", {
      viewBox: viewBoxOf(extent, game.margin ?? 0.3), role: "group",
      "aria-label": game.boardLabel(view), preserveAspectRatio: "xMidYMid meet",
    });
    board.append(seatDefs());
    board.append(...game.background(view));
    const tileLayer = svg("g", { class: "tiles" });
    for (const t of tiles) {
      const g = placedTile(t.geometry, t.x, t.y, t.rotation, game.style);
      g.setAttribute("data-tile", `${t.x},${t.y}`);
      g.prepend(svgTitle(game.tileLabel(t)));
      tileLayer.append(g);
    }
    board.append(tileLayer);
    board.append(...game.overlay(view));
    board.append(drawFollowers(tiles));
    const placed = game.placedCell(view);
    if (placed) {
      board.append(svg("rect", {
        x: placed[0] * TILE + 2, y: placed[1] * TILE + 2, width: TILE - 4, height: TILE - 4,
        fill: "none", stroke: "#0072B2", "stroke-width": 4, "stroke-dasharray": "10 5", "pointer-events": "none",
      }));
    }
    board.append(drawPlacements(view, cellsOf));
    if (placed) board.append(drawSpots(view, legal, tiles.find((t) => t.x === placed[0] && t.y === placed[1])));
    return board;
  }

  function drawFollowers(tiles) {
    const layer = svg("g", { class: "followers" });
    for (const t of tiles) {
      const groups = new Map();
      for (const f of t.followers) {
        const segment = segmentAtSpot(t.geometry, t.rotation, f.at, game.ports);
        if (segment === null) continue;
        const list = groups.get(segment) || [];
        list.push(f);
        groups.set(segment, list);
      }
      for (const [segment, list] of groups) {
        const [ax, ay] = anchorOnBoard(t.geometry, segment, t.x, t.y, t.rotation, game.lineKinds);
        const kind = t.geometry.segments[segment].kind;
        list.forEach((f, i) => {
          const look = game.followerLook(f, kind);
          const dx = (i - (list.length - 1) / 2) * 16;
          layer.append(meeple(f.seat, ax + dx, ay, { ...look, label: game.followerLabel(f, kind, t) }));
        });
      }
    }
    return layer;
  }

  function drawPlacements(view, cellsOf) {
    const layer = svg("g", { class: "placements" });
    const geometry = view.tile ? game.geometryOf(view.tile, view) : null;
    for (const [key, commands] of cellsOf) {
      const { x, y } = commands[0].args;
      const rotations = commands.map((c) => c.args.rotation).join(", ");
      if (key !== selectedCell) {
        const cell = hitArea("rect", {
          x: x * TILE + 4, y: y * TILE + 4, width: TILE - 8, height: TILE - 8, rx: 8,
          fill: "rgba(0,114,178,0.12)", stroke: "#0072B2", "stroke-width": 3, "stroke-dasharray": "8 6",
        });
        layer.append(asSelect(cell, key, `place the tile at ${x}, ${y}: rotations ${rotations}`));
        continue;
      }
      const back = svg("rect", {
        x: x * TILE, y: y * TILE, width: TILE, height: TILE, fill: "#ffffff", stroke: "#0072B2", "stroke-width": 3,
      });
      layer.append(asSelect(back, key, `cell ${x}, ${y} chosen; activate again to choose another cell`, true));
      for (const command of commands) {
        const [sx, sy] = ROTATION_SLOTS[command.args.rotation] || [0, 0];
        const cx = x * TILE + TILE / 2 + sx * TILE / 4;
        const cy = y * TILE + TILE / 2 + sy * TILE / 4;
        const g = svg("g", { transform: `translate(${cx},${cy})` });
        const art = geometry ? drawTile(geometry, game.style) : svg("g");
        art.setAttribute("transform", `scale(0.46) rotate(${command.args.rotation})`);
        g.append(art);
        g.append(svg("rect", { x: -23, y: -23, width: 46, height: 46, class: "focus-ring" }));
        g.append(svg("text", {
          x: 21, y: 20, "text-anchor": "end", "font-size": 9, "font-weight": 700, fill: "#fff",
          stroke: "#000", "stroke-width": 2.5, "paint-order": "stroke", "pointer-events": "none", text: `${command.args.rotation}°`,
        }));
        layer.append(asCommand(g, command, `place ${view.tile} at ${x}, ${y} turned ${command.args.rotation} degrees`));
      }
    }
    return layer;
  }

  function drawSpots(view, legal, tile) {
    const layer = svg("g", { class: "spots" });
    if (!tile) return layer;
    const spotted = legal.filter((c) => game.spotOf(c) !== null);
    const bySegment = new Map();
    for (const command of spotted) {
      const segment = segmentAtSpot(tile.geometry, tile.rotation, game.spotOf(command), game.ports);
      if (segment === null) continue;
      const list = bySegment.get(segment) || [];
      list.push(command);
      bySegment.set(segment, list);
    }
    // One marker per spot: it sends its command, or, when the spot takes several kinds of
    // follower, selects the spot and the panel lists the kinds.
    const markers = [];
    if (selectedSpot && !bySegment.has(Number(selectedSpot.slice(5)))) selectedSpot = null;
    spotCommands = [];
    for (const [segment, commands] of bySegment) {
      const [x, y] = anchorOnBoard(tile.geometry, segment, tile.x, tile.y, tile.rotation, game.lineKinds);
      const kind = tile.geometry.segments[segment].kind;
      const key = `spot:${segment}`;
      const look = commands.length === 1 ? game.spotMarker(commands[0], kind) : { r: 11, text: `${commands.length}` };
      markers.push({ commands, kind, key, x, y, ...look });
      if (key === selectedSpot) spotCommands = commands.map((c) => [c, kind]);
    }
    placeApart(markers, tile.x * TILE, tile.y * TILE);
    for (const m of markers) {
      const chosen = m.key === selectedSpot;
      const g = hitArea("circle", { cx: m.x, cy: m.y, r: m.r, fill: chosen ? "#0072B2" : "rgba(255,255,255,0.85)", stroke: "#111", "stroke-width": 2, "stroke-dasharray": chosen ? "none" : "4 2" });
      g.append(svg("text", {
        x: m.x, y: m.y + 4, "text-anchor": "middle", "font-size": 11, "font-weight": 700, fill: chosen ? "#fff" : "#111",
        "pointer-events": "none", text: m.text,
      }));
      if (m.commands.length === 1) layer.append(asCommand(g, m.commands[0], game.commandLabel(m.commands[0], m.kind)));
      else layer.append(asSelect(g, m.key, `${m.kind} at ${game.spotOf(m.commands[0])}: ${m.commands.length} choices`, chosen));
    }
    return layer;
  }

  function drawPanel(view, legal) {
    const out = [...game.panel(view, state, ctx)];
    if (view.tile) {
      const geometry = game.geometryOf(view.tile, view);
      const preview = svg("svg", { viewBox: "-55 -55 110 110", width: 96, height: 96, role: "img", "aria-label": `tile to place: ${view.tile}` });
      if (geometry) preview.append(drawTile(geometry, game.style));
      out.push(html("div", { class: "board-row" }, [preview, html("p", { class: "board-note", text: game.tileNote(view) })]));
    }
    const placements = legal.filter((c) => c.type === "place_tile");
    if (placements.length) {
      const cells = new Set(placements.map((c) => `${c.args.x},${c.args.y}`)).size;
      out.push(html("p", { class: "board-note", text: selectedCell
        ? `Choose a rotation in cell ${selectedCell} (Escape: another cell).`
        : `Choose one of the ${cells} highlighted cells, then a rotation.` }));
    }
    if (spotCommands.length) {
      out.push(html("p", { class: "board-note", text: "Choose the follower for this spot:" }));
      out.push(html("div", { class: "board-row" }, spotCommands.map(([c, kind]) => commandButton(c, game.commandLabel(c, kind)))));
    }
    const rest = legal.filter((c) => c.type !== "place_tile" && game.spotOf(c) === null);
    if (rest.length) {
      out.push(html("div", { class: "board-row" }, rest.map((c) => commandButton(c, game.commandLabel(c, null)))));
    }
    return out;
  }

  return {
    root,
    update(next) {
      const moved = !state || next.version !== state.version;
      state = next;
      if (moved) pending = false;
      render();
    },
    destroy() {
      unwire();
      root.remove();
    },
  };
}

// Moves spot markers so that none covers another and all stay on their tile (left, top: the
// tile's corner): each keeps its place if it can, else takes the nearest free nudge.
const NUDGES = [[0, 0]];
for (const d of [20, 30, 40]) for (let k = 0; k < 8; k += 1) NUDGES.push([Math.round(d * Math.cos((k * Math.PI) / 4)), Math.round(d * Math.sin((k * Math.PI) / 4))]);

function placeApart(markers, left, top) {
  const clamp = (v, lo, r) => Math.min(Math.max(v, lo + r + 1), lo + TILE - r - 1);
  const placed = [];
  for (const m of markers) {
    const free = (x, y) => placed.every((o) => Math.hypot(o.x - x, o.y - y) >= o.r + m.r + 2);
    let best = null;
    for (const [dx, dy] of NUDGES) {
      const x = clamp(m.x + dx, left, m.r), y = clamp(m.y + dy, top, m.r);
      if (free(x, y)) { best = [x, y]; break; }
    }
    [m.x, m.y] = best || [clamp(m.x, left, m.r), clamp(m.y, top, m.r)];
    placed.push(m);
  }
}

function svgTitle(text) {
  return svg("title", { text });
}

export { rotatePoint };
