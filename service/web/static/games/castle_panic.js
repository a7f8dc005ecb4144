// Castle Panic (every version, Overlord included): the rings and six arcs, monsters with their hit
// points, walls, towers, tar and fortify tokens; the viewer's own hand (never another's) and the
// cards, targets, trades, discards and damage choices of `legal` as controls.

import {
  animKey, asCommand, asSelect, boardLayout, commandButton, commandKey, describeServiceEvent, hitArea, html, list,
  redraw, refocus, seatChip, seatDefs, selectButton, svg, title, who, wireControls,
} from "./common.js";

const RINGS = [
  { name: "castle", inner: 38, outer: 100 },
  { name: "swordsman", inner: 100, outer: 162 },
  { name: "knight", inner: 162, outer: 224 },
  { name: "archer", inner: 224, outer: 286 },
  { name: "forest", inner: 286, outer: 350 },
];
const ARC_COLOUR = { 1: "red", 2: "red", 3: "green", 4: "green", 5: "blue", 6: "blue" };
// Colour-blind-safe hues, and a letter on every arc, so colour is never the only cue.
const HUE = { red: ["#D55E00", "#f6d2bd", "#efbb9c"], green: ["#009E73", "#c4eadc", "#a6dfca"], blue: ["#0072B2", "#c6dff0", "#a7cbe6"] };
const MONSTER_LOOK = {
  goblin: ["#bfe3a0", "G"], orc: ["#f3cd7a", "O"], troll: ["#c6b4e0", "T"],
  goblin_king: ["#f29b9b", "GK"], orc_warlord: ["#f29b9b", "OW"], troll_mage: ["#f29b9b", "TM"], healer: ["#f29b9b", "H"],
};

const angleOf = (arc, f = 0.5) => ((-90 + (arc - 1 + f) * 60) * Math.PI) / 180;
const polar = (r, a) => [r * Math.cos(a), r * Math.sin(a)];
const f2 = (n) => n.toFixed(2);

function sector(inner, outer, arc) {
  const a0 = angleOf(arc, 0), a1 = angleOf(arc, 1);
  const [x0, y0] = polar(outer, a0), [x1, y1] = polar(outer, a1), [x2, y2] = polar(inner, a1), [x3, y3] = polar(inner, a0);
  return `M${f2(x0)} ${f2(y0)}A${outer} ${outer} 0 0 1 ${f2(x1)} ${f2(y1)}L${f2(x2)} ${f2(y2)}A${inner} ${inner} 0 0 0 ${f2(x3)} ${f2(y3)}Z`;
}

function arcLine(r, arc, inset = 0.04) {
  const [x0, y0] = polar(r, angleOf(arc, inset)), [x1, y1] = polar(r, angleOf(arc, 1 - inset));
  return `M${f2(x0)} ${f2(y0)}A${r} ${r} 0 0 1 ${f2(x1)} ${f2(y1)}`;
}

export const kindOf = (id) => String(id).split("#")[0];
export const cardName = (id) => {
  const kind = kindOf(id);
  const words = kind.replace(/_/g, " ");
  return { nice_shot: "Nice Shot", drive_him_back: "Drive Him Back!", draw_2: "Draw 2 Cards", fortify_wall: "Fortify Wall", archer_any: "archer (any colour)", knight_any: "knight (any colour)", swordsman_any: "swordsman (any colour)" }[kind] || words;
};
const monsterName = (id) => `${kindOf(id).replace(/_/g, " ")} ${String(id).split("#")[1] || ""}`.trim();

export function createBoard(container, ctx) {
  const { root, figure, panel } = boardLayout(container, "castle_panic");
  let state = null;
  let selected = null;
  let combo = null;
  let pending = false;
  let byKey = new Map();

  const send = (key) => {
    const command = byKey.get(key);
    if (!command || pending) return;
    pending = true;
    Promise.resolve(ctx.send(command)).catch(() => {}).finally(() => { pending = false; });
  };
  const unwire = wireControls(root, {
    onCommand: send,
    onSelect: (key) => {
      if (key.startsWith("combo:")) combo = combo === key ? null : key;
      else {
        selected = selected === key ? null : key;
        combo = null;
      }
      render();
    },
  });
  root.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && selected) { selected = null; combo = null; render(); }
  });

  function ownCommands(legal) {
    // Commands that name one of the viewer's cards or tokens: chosen through that card first.
    const byItem = new Map();
    for (const c of legal) {
      const item = c.args?.card ?? c.args?.give ?? c.args?.token;
      if (item === undefined || c.type === "accept_trade") continue;
      if (!byItem.has(item)) byItem.set(item, []);
      byItem.get(item).push(c);
    }
    return byItem;
  }

  // animate: this drawing follows a new version (a selection's redraw has nothing to settle).
  function render(animate = false) {
    const focused = root.contains(document.activeElement) ? document.activeElement : null;
    const view = state.view;
    const legal = ctx.seat === null || ctx.seat === undefined || state.live === false ? [] : state.legal || [];
    byKey = new Map(legal.map((c) => [commandKey(c), c]));
    const byItem = ownCommands(legal);
    if (selected && !byItem.has(selected.slice(5))) { selected = null; combo = null; }
    const chosen = selected ? byItem.get(selected.slice(5)) : [];
    const combos = [...new Set(chosen.map((c) => JSON.stringify(c.args.with || [])))];
    if (combo && !combos.includes(combo.slice(6))) combo = null;
    const active = chosen.filter((c) => combos.length <= 1 || JSON.stringify(c.args.with || []) === (combo ? combo.slice(6) : combos[0]));
    const monsters = new Set((view.board?.monsters || []).map((m) => m.id));
    const onMonster = new Map(), onArc = new Map(), onForest = new Map();
    const leftover = [];
    for (const c of active) {
      const target = c.args.target;
      if (c.type === "place_monster") onForest.set(c.args.arc, c);
      else if (typeof target === "string" && monsters.has(target)) onMonster.set(target, c);
      else if (typeof target === "number") onArc.set(target, c);
      else leftover.push(c);
    }
    for (const c of legal) if (c.type === "assign_damage") onMonster.set(c.args.monster, c);
    const claimed = new Set([...byItem.values()].flat().concat(legal.filter((c) => c.type === "assign_damage")));
    const general = legal.filter((c) => !claimed.has(c));
    redraw(figure, drawBoard(view, onMonster, onArc, onForest), state, animate);
    panel.replaceChildren(...drawPanel(view, byItem, chosen, combos, leftover, general));
    refocus(root, focused);
  }

  function drawBoard(view, onMonster, onArc, onForest) {
    const board = svg("svg", { viewBox: "-395 -395 790 790", role: "group", "aria-label": boardLabel(view), preserveAspectRatio: "xMidYMid meet" });
    board.append(seatDefs());
    const controls = [];
    for (let arc = 1; arc <= 6; arc += 1) {
      const [strong, light, mid] = HUE[ARC_COLOUR[arc]];
      RINGS.forEach((ring, i) => {
        if (i === 0) return;
        board.append(svg("path", { d: sector(ring.inner, ring.outer, arc), fill: i === 4 ? "#9fc58a" : i % 2 ? light : mid, stroke: "#ffffff", "stroke-width": 2 }));
      });
      board.append(svg("path", { d: sector(RINGS[0].inner, RINGS[0].outer, arc), fill: "#e7e0cf", stroke: "#fff", "stroke-width": 2 }));
      const [tx, ty] = polar(372, angleOf(arc, 0.5));
      board.append(svg("text", { x: tx, y: ty + 8, "text-anchor": "middle", "font-size": 24, "font-weight": 700, fill: strong, stroke: "#fff", "stroke-width": 4, "paint-order": "stroke", text: `${arc} ${ARC_COLOUR[arc][0].toUpperCase()}` }));
      if (onForest.has(arc)) {
        const c = onForest.get(arc);
        board.append(svg("path", { d: sector(RINGS[4].inner + 4, RINGS[4].outer - 4, arc), fill: "rgba(255,255,255,0.35)", stroke: "#111", "stroke-width": 3, "stroke-dasharray": "8 5", "pointer-events": "none" }));
        controls.push(asCommand(targetMarker(318, arc, "+"), c, `place ${monsterName(c.args.token)} in the forest of arc ${arc}`));
      }
    }
    RINGS.slice(1).forEach((ring) => {
      const [x, y] = polar((ring.inner + ring.outer) / 2, angleOf(1, 0.02));
      board.append(svg("text", { x: x + 3, y: y + 5, "font-size": 14, fill: "#222", stroke: "#fff", "stroke-width": 3, "paint-order": "stroke", "pointer-events": "none", text: ring.name }));
    });
    board.append(svg("circle", { cx: 0, cy: 0, r: RINGS[0].inner, fill: "#cfc6b0", stroke: "#6d6452", "stroke-width": 2 }));
    board.append(svg("text", { x: 0, y: 5, "text-anchor": "middle", "font-size": 13, "font-weight": 700, fill: "#3b3427", text: `${(view.board?.towers || []).length} towers` }));
    const walls = new Set(view.board?.walls || []);
    const fortified = new Set(view.board?.fortified || []);
    const towers = new Set(view.board?.towers || []);
    for (let arc = 1; arc <= 6; arc += 1) {
      if (walls.has(arc)) {
        const wall = svg("g", {}, [title(`wall of arc ${arc}${fortified.has(arc) ? ", fortified" : ""}`)]);
        wall.append(svg("path", { d: arcLine(100, arc), fill: "none", stroke: "#6b4a2b", "stroke-width": 12 }));
        wall.append(svg("path", { d: arcLine(100, arc), fill: "none", stroke: "#b08456", "stroke-width": 6, "stroke-dasharray": "10 4" }));
        if (fortified.has(arc)) {
          const [fx, fy] = polar(100, angleOf(arc, 0.5));
          wall.append(svg("rect", { x: fx - 9, y: fy - 9, width: 18, height: 18, fill: "#f0c419", stroke: "#3b2d00", "stroke-width": 2, transform: `rotate(45 ${f2(fx)} ${f2(fy)})` }));
        }
        board.append(animKey(wall, `wall:${arc}${fortified.has(arc) ? ":fortified" : ""}`));
      } else {
        board.append(svg("path", { d: arcLine(100, arc), fill: "none", stroke: "#6b4a2b", "stroke-width": 2, "stroke-dasharray": "3 5" }, [title(`no wall on arc ${arc}`)]));
      }
      const [cx, cy] = polar(62, angleOf(arc, 0.5));
      board.append(towers.has(arc) ? tower(cx, cy, arc, view) : svg("g", {}, [title(`tower of arc ${arc} destroyed`),
        svg("path", { d: `M${f2(cx - 10)} ${f2(cy + 8)}l6-9 5 5 4-7 5 11z`, fill: "#8a8172", stroke: "#3b3427", "stroke-width": 1.5 })]));
      if (onArc.has(arc)) {
        const c = onArc.get(arc);
        board.append(svg("path", { d: sector(88, 112, arc), fill: "rgba(255,255,255,0.4)", stroke: "#111", "stroke-width": 3, "stroke-dasharray": "6 4", "pointer-events": "none" }));
        controls.push(asCommand(targetMarker(100, arc, "▲"), c, `${cardName(c.args.card)}${c.args.with?.length ? ` with ${c.args.with.map(cardName).join(", ")}` : ""} on the wall of arc ${arc}`));
      }
    }
    board.append(drawMonsters(view, onMonster));
    board.append(...controls);
    return board;
  }

  function tower(cx, cy, arc, view) {
    const claim = (view.my_home?.claims || []).find((c) => c.arc === arc);
    const g = svg("g", {}, [title(`tower of arc ${arc}${claim ? `, home of ${who(claim.seat)}` : ""}${view.my_home?.kings_tower === arc ? ", the King's Tower" : ""}`)]);
    g.append(svg("path", { d: `M${f2(cx - 11)} ${f2(cy + 12)}v-18h4v-5h4v5h6v-5h4v5h4v18z`, fill: "#d9d2c1", stroke: "#3b3427", "stroke-width": 2 }));
    if (claim) g.append(svg("circle", { cx: cx, cy: cy + 3, r: 4, fill: "#fff", stroke: "#111" }));
    return g;
  }

  function drawMonsters(view, onMonster) {
    const layer = svg("g", { class: "monsters" });
    const cells = new Map();
    for (const m of view.board?.monsters || []) {
      const key = `${m.ring}:${m.arc}`;
      cells.set(key, [...(cells.get(key) || []), m]);
    }
    for (const [, group] of cells) {
      group.forEach((m, i) => {
        const ring = RINGS[m.ring];
        const n = group.length;
        const rows = n > 3 ? 2 : 1;
        const perRow = Math.ceil(n / rows);
        const row = Math.floor(i / perRow), col = i % perRow;
        const r = m.ring === 0 ? 86 : rows === 1 ? (ring.inner + ring.outer) / 2 : ring.inner + (ring.outer - ring.inner) * (row ? 0.72 : 0.3);
        const [x, y] = polar(r, angleOf(m.arc, (col + 0.5) / perRow));
        const token = monsterToken(m, x, y, n > 3 || m.ring === 0 ? 14 : 21);
        const c = onMonster.get(m.id);
        if (c) layer.append(asCommand(token, c, commandLabel(c, view)));
        else layer.append(token);
      });
    }
    return layer;
  }

  function drawPanel(view, byItem, chosen, combos, leftover, general) {
    const out = [html("h3", { text: `Castle Panic${view.overlord !== null && view.overlord !== undefined ? " (Overlord)" : ""}` })];
    if (!view.started) return out;
    const phase = String(view.phase || "").replace(/_/g, " ");
    out.push(html("p", { class: "board-note", text: `Turn ${view.turn}: ${who(view.turn_seat)}, phase ${phase}. Deck ${view.deck_size} cards, monster pile ${view.monster_pile_size} tokens, ${(view.board?.monsters || []).length} monsters on the board, tar ${view.board?.tar ? `on ${monsterName(view.board.tar)}` : "free"}, ${view.board?.fortify_tokens_left} fortify token${view.board?.fortify_tokens_left === 1 ? "" : "s"} left.` }));
    for (let seat = 0; seat < view.seats; seat += 1) {
      const score = (view.scores || []).find((s) => s.seat === seat);
      const role = seat === view.overlord ? "Overlord" : `${view.hand_counts?.[seat]} card${view.hand_counts?.[seat] === 1 ? "" : "s"}${score ? ` · ${score.vp} VP (${score.slain} slain)` : ""}`;
      const mark = (view.waiting_for || []).includes(seat) ? " ◀" : "";
      out.push(html("div", { class: "board-row" }, [seatChip(seat), html("span", { text: `${role}${mark}` })]));
    }
    if (view.trade) {
      const t = view.trade;
      const what = t.give ? `: ${cardName(t.give)}${t.take ? ` for ${cardName(t.take)}` : ""}` : "";
      out.push(html("p", { class: "board-note", text: `Trade offered by ${who(t.from)} to ${who(t.to)}${what}.` }));
    }
    if (view.pending?.damage?.length) out.push(html("p", { class: "board-note", text: `Damage to assign at arc ${view.pending.damage[0].arc}: choose the monster that takes it.` }));
    if (view.pending?.discards?.length) out.push(html("p", { class: "board-note", text: `Owed discards: ${list(view.pending.discards.map(who))}.` }));
    if (view.result) out.push(html("p", { class: "board-note", text: `The game is over: ${view.result.outcome} (${String(view.result.reason).replace(/_/g, " ")}).` }));
    const own = ctx.seat !== null && ctx.seat !== undefined ? ownItems(view) : null;
    if (own) {
      out.push(html("h3", { text: own.title }));
      const row = html("div", { class: "board-row" });
      for (const item of own.items) row.append(card(item, byItem.get(item) || [], own.monsters));
      if (!own.items.length) row.append(html("span", { class: "board-note", text: "empty" }));
      out.push(row);
    }
    if (selected) {
      if (combos.length > 1) {
        out.push(html("div", { class: "board-row" }, combos.map((c, i) => selectButton(`combo:${c}`, c === "[]" ? "alone" : `with ${JSON.parse(c).map(cardName).join(" + ")}`,
          combo ? combo === `combo:${c}` : i === 0))));
      }
      const targets = chosen.some((c) => typeof c.args.target !== "undefined" || c.type === "place_monster");
      if (targets) out.push(html("p", { class: "board-note", text: "Choose a target on the board (highlighted), or below." }));
      if (leftover.length) out.push(html("div", { class: "board-row" }, leftover.map((c) => commandButton(c, commandLabel(c, view)))));
    }
    if (general.length) out.push(html("div", { class: "board-row" }, general.map((c) => commandButton(c, commandLabel(c, view)))));
    if ((view.discard || []).length) out.push(html("p", { class: "board-note", text: `Discard pile: ${view.discard.map(cardName).join(", ")}.` }));
    return out;
  }

  function ownItems(view) {
    if (ctx.seat === view.overlord) return { title: "Your monster tokens", items: view.overlord_hand || [], monsters: true };
    const hand = view.hands?.[ctx.seat];
    return hand ? { title: "Your hand", items: hand, monsters: false } : null;
  }

  function card(item, commands, isToken) {
    const name = isToken ? monsterName(item) : cardName(item);
    const node = html("div", { class: "board-card", "data-item": item }, [html("strong", { text: name })]); // the id for programs, the name for people
    if (commands.length === 1 && isDirect(commands[0])) return asCommand(node, commands[0], commandLabel(commands[0], state.view));
    if (commands.length) return asSelect(node, `item:${item}`, `choose ${name}: ${commands.length} possible plays`, selected === `item:${item}`);
    node.setAttribute("aria-label", `${name} (nothing to do with it now)`);
    return node;
  }

  return {
    root,
    update(next) {
      const moved = !state || next.version !== state.version;
      state = next;
      if (moved) pending = false;
      render(moved);
    },
    destroy() { unwire(); root.remove(); },
  };
}

// A card whose one command needs no further choice is itself the control.
const isDirect = (c) => ["discard_and_draw", "discard", "play_token"].includes(c.type) || (c.type === "play_card" && c.args.target === undefined && !c.args.with);

// A round target on a place (an arc's forest, a wall line): easy to hit with a finger.
function targetMarker(r, arc, text) {
  const [x, y] = polar(r, angleOf(arc, 0.5));
  const g = hitArea("circle", { cx: f2(x), cy: f2(y), r: 18, fill: "#ffffff", stroke: "#111", "stroke-width": 3 });
  g.append(svg("text", { x: f2(x), y: f2(y + 6), "text-anchor": "middle", "font-size": 17, "font-weight": 700, fill: "#111", "pointer-events": "none", text }));
  return g;
}

function monsterToken(m, x, y, r) {
  const [fill, letter] = MONSTER_LOOK[m.kind] || ["#ddd", m.kind.slice(0, 2).toUpperCase()];
  const g = hitArea("circle", { cx: f2(x), cy: f2(y), r, fill, stroke: "#222", "stroke-width": 2 });
  g.setAttribute("data-monster", m.id);
  animKey(g, `monster:${m.id}`, [x, y]);
  g.prepend(title(`${monsterName(m.id)}: ${m.hp} of ${m.max_hp} hit points, ${m.ring_name} ring of arc ${m.arc} (${m.colour})${m.tarred ? ", tarred" : ""}`));
  if (m.tarred) g.append(svg("circle", { cx: f2(x), cy: f2(y), r: r + 5, fill: "none", stroke: "#111", "stroke-width": 4, "stroke-dasharray": "4 3" }));
  g.append(svg("text", { x: f2(x), y: f2(y - r * 0.12), "text-anchor": "middle", "font-size": r * 0.72, "font-weight": 700, fill: "#111", "pointer-events": "none", text: letter }));
  g.append(svg("text", { x: f2(x), y: f2(y + r * 0.66), "text-anchor": "middle", "font-size": r * 0.62, "font-weight": 600, fill: "#111", "pointer-events": "none", text: `${m.hp}/${m.max_hp}` }));
  return g;
}

function boardLabel(view) {
  if (!view.started) return "Castle Panic: not started";
  return `Castle Panic board: ${(view.board?.monsters || []).length} monsters, walls on arcs ${list(view.board?.walls || []) || "none"}, towers on arcs ${list(view.board?.towers || []) || "none"}`;
}

function targetWords(c, view) {
  const t = c.args.target;
  if (t === undefined) return "";
  if (typeof t === "number") return ` on the wall of arc ${t}`;
  if ((view?.board?.monsters || []).some((m) => m.id === t)) return ` on ${monsterName(t)}`;
  return ` taking ${cardName(t)} from the discard pile`;
}

export function commandLabel(c, view) {
  const a = c.args || {};
  switch (c.type) {
    case "play_card": return `play ${cardName(a.card)}${a.with?.length ? ` with ${a.with.map(cardName).join(" and ")}` : ""}${targetWords(c, view)}`;
    case "discard_and_draw": return `discard ${cardName(a.card)} and draw`;
    case "discard": return `discard ${cardName(a.card)}`;
    case "end_phase": return `end the ${String(view?.phase || "phase").replace(/_/g, " ")} phase`;
    case "propose_trade": return `offer ${cardName(a.give)} to ${who(a.to)}${a.take ? ` for ${cardName(a.take)}` : ""}`;
    case "accept_trade": return a.card ? `accept the trade, giving ${cardName(a.card)}` : "accept the trade";
    case "decline_trade": return "decline the trade";
    case "cancel_trade": return "cancel your trade offer";
    case "assign_damage": return `${monsterName(a.monster)} takes the damage`;
    case "place_monster": return `place ${monsterName(a.token)} in the forest of arc ${a.arc}`;
    case "play_token": return `play ${monsterName(a.token)} (arc by die roll)`;
    default: return `${c.type} ${JSON.stringify(a)}`;
  }
}

export function describeEvent(event, ctx) {
  const service = describeServiceEvent(event);
  if (service !== null) return service;
  const p = event.payload || {};
  const cards = (ids) => list((ids || []).map(cardName));
  switch (event.type) {
    case "game_started": return `The game starts: ${p.castle_seats?.length} castle players${p.overlord !== null && p.overlord !== undefined ? ` and the Overlord (${who(p.overlord)})` : ""}, hands of ${p.hand_size}.`;
    case "monster_placed": return `${monsterName(p.monster)} enters the ${RINGS[p.ring]?.name} ring of arc ${p.arc}${p.roll ? ` (die: ${p.roll})` : ""}.`;
    case "token_revealed": return `Token ${monsterName(p.token)} is revealed${p.roll ? ` (arc ${p.roll})` : ""}.`;
    case "cards_drawn": return p.cards ? `${who(p.seat)} draws ${cards(p.cards)}.` : `${who(p.seat)} draws ${p.count} card${p.count === 1 ? "" : "s"}.`;
    case "deck_reshuffled": return `The discard pile is shuffled into a new deck${p.removed?.length ? `; ${cards(p.removed)} leave the game` : ""}.`;
    case "turn_started": return `Turn ${p.turn}: ${who(p.seat)}.`;
    case "phase_changed": return `Phase: ${String(p.phase).replace(/_/g, " ")}.`;
    case "cards_discarded": return `${who(p.seat)} discards ${cards(p.cards)}.`;
    case "trade_proposed": return p.give ? `${who(p.from)} offers ${cardName(p.give)} to ${who(p.to)}${p.take ? ` for ${cardName(p.take)}` : ""}.` : `${who(p.from)} offers ${who(p.to)} a trade.`;
    case "trade_declined": return `${who(p.by)} declines the trade.`;
    case "trade_cancelled": return `${who(p.by)} cancels the trade.`;
    case "cards_traded": return p.gave ? `${who(p.from)} and ${who(p.to)} trade ${cardName(p.gave)} for ${cardName(p.got)}.` : `${who(p.from)} and ${who(p.to)} trade cards.`;
    case "card_played": return `${who(p.seat)} plays ${cardName(p.card)}${p.with?.length ? ` with ${cards(p.with)}` : ""}${p.target !== null && p.target !== undefined ? ` on ${typeof p.target === "number" ? `arc ${p.target}` : String(p.target).includes("#") ? monsterName(p.target) : p.target}` : ""}.`;
    case "card_scavenged": return `${who(p.seat)} takes ${cardName(p.card)} from the discard pile.`;
    case "monster_damaged": return `${monsterName(p.monster)} is hit (${p.hp} hit points left).`;
    case "monster_slain": return `${monsterName(p.monster)} is slain${p.by !== null && p.by !== undefined ? ` by ${who(p.by)}` : ""}.`;
    case "monsters_moved": return `${(p.moves || []).length} monster${(p.moves || []).length === 1 ? "" : "s"} move.`;
    case "monsters_healed": return `${(p.monsters || []).length} monsters heal.`;
    case "wall_destroyed": return `The wall of arc ${p.arc} is destroyed.`;
    case "wall_built": return `A wall is built on arc ${p.arc}.`;
    case "wall_fortified": return `The wall of arc ${p.arc} is fortified.`;
    case "fortify_removed": return `The fortify token of arc ${p.arc} is lost.`;
    case "tower_destroyed": return `The tower of arc ${p.arc} falls.`;
    case "tar_placed": return `Tar on ${monsterName(p.monster)}: it does not move this turn.`;
    case "draws_queued": return `${p.count} more monster tokens will be drawn.`;
    case "discards_owed": return `${list((p.seats || []).map(who))} must discard a card.`;
    case "damage_pending": return `${who(p.seat)} chooses which monster takes the damage at arc ${p.arc}.`;
    case "damage_assigned": return `${monsterName(p.monster)} takes the damage.`;
    case "overlord_drew": return p.tokens ? `The Overlord draws ${list(p.tokens.map(monsterName))}.` : `The Overlord draws ${p.count} token${p.count === 1 ? "" : "s"}.`;
    case "overlord_played": return `The Overlord plays ${monsterName(p.token)} (${p.mode}).`;
    case "tower_claimed": return `${who(p.seat)} claims the tower of arc ${p.arc}.`;
    case "player_eliminated": return `${who(p.seat)} is out of the game.`;
    case "hand_size_changed": return `Hands now hold ${p.hand_size} cards.`;
    case "game_ended": return `The game ends: ${p.outcome === "win" ? "the castle stands" : "the castle falls"} (${String(p.reason).replace(/_/g, " ")})${p.master_slayers?.length ? `; Master Slayer: ${list(p.master_slayers.map(who))}` : ""}.`;
    default: return `${event.type} ${JSON.stringify(p)}`;
  }
}

export function summary(view, ctx) {
  if (!view.started) return { scores: [], turn: null, text: "Waiting for the game to start." };
  const scores = (view.scores || []).map(({ seat, vp }) => ({ seat, points: vp }));
  if (view.result) {
    return { scores, turn: null, text: `Game over: ${view.result.outcome === "win" ? "the castle stands" : "the castle falls"}.` };
  }
  const turn = view.active ?? view.turn_seat ?? null;
  return { scores, turn, text: `Turn ${view.turn}: ${who(turn)} (${String(view.phase).replace(/_/g, " ")}); ${(view.board?.towers || []).length} towers stand.` };
}
