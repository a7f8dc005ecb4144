"""The monsters: damage and slaying, movement (walls, fortifications and towers they hit), and
the tokens that come in from the pile or the Overlord's hand (monsters placed, bosses' effects,
plagues, colour moves, the giant boulder)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games.base import (
    Rng,
)
from games.castle_panic.data import (
    ARC_COLOUR,
    CARD_KIND,
    CLOCKWISE,
    TOKEN_KIND,
    Ring,
    opposite,
    step,
)
from games.castle_panic.drawing import overlord_draw, roll_die
from games.castle_panic.run import (
    COLOUR_MOVES,
    EXTRA_DRAWS,
    PLAGUES,
    Run,
    acting_seat,
    find_monster,
    living_castle_seats,
)
from games.castle_panic.state import Monster

# --- monsters: damage, movement, tokens ----------------------------------------------------


def hurt(run: Run, monster: str, cause: str, slayer: int | None = None) -> None:
    """1 damage; at 0 the monster is slain (a trophy when a player's card did it)."""
    m = find_monster(run.state, monster)
    if m is None:
        return
    if m.hp <= 1:
        slay(run, monster, cause, slayer)
    else:
        run.emit("monster_damaged", {"monster": monster, "hp": m.hp - 1, "cause": cause})


def slay(run: Run, monster: str, cause: str, slayer: int | None = None) -> None:
    assert run.state.config is not None
    trophy = slayer is not None and run.state.config.options.master_slayer
    run.emit("monster_slain", {"monster": monster, "by": slayer, "cause": cause, "trophy": trophy})


def everyone(monster: Monster) -> bool:
    return True


def move_monsters(run: Run, chosen: Callable[[Monster], bool], delta: int, cause: str) -> None:
    """Move the chosen monsters one step at once: inward (``delta`` 0; the castle ring goes
    clockwise) or ``delta`` arcs sideways within their ring. Rules file §7.1-7.5 and §7.8."""
    board = run.state.board
    walls, towers = board.walls, board.towers
    moves: list[list[Any]] = []
    wall_hits: dict[int, list[str]] = {}
    tower_hits: dict[int, list[str]] = {}
    for m in board.monsters:
        if m.id == board.tar or not chosen(m):
            continue
        ring: int  # Monster.ring is a plain int: a Ring, or one ring further in
        if delta == 0:
            if m.ring == Ring.CASTLE:
                ring, arc = Ring.CASTLE, step(m.arc, CLOCKWISE)
            elif m.ring == Ring.SWORDSMAN and m.arc in walls:
                wall_hits.setdefault(m.arc, []).append(m.id)
                continue
            else:
                ring, arc = m.ring - 1, m.arc
        else:
            ring, arc = m.ring, step(m.arc, delta)
        moves.append([m.id, int(ring), arc])
        if ring == Ring.CASTLE and arc in towers:
            tower_hits.setdefault(arc, []).append(m.id)
    if moves:
        run.emit("monsters_moved", {"moves": moves, "cause": cause})
    for arc in sorted(wall_hits):
        if arc in run.state.board.fortified:
            run.emit("fortify_removed", {"arc": arc})
            _damage_one(run, wall_hits[arc], arc, "fortify")
        else:
            run.emit("wall_destroyed", {"arc": arc})
            _damage_one(run, wall_hits[arc], arc, "wall")
    for arc in sorted(tower_hits):
        _destroy_tower(run, arc)
        if not run.state.board.towers:
            return
        _damage_one(run, tower_hits[arc], arc, "tower")


def _damage_one(run: Run, group: list[str], arc: int, structure: str) -> None:
    """One monster of ``group`` takes the structure's damage; the acting seat picks it unless
    the candidates are interchangeable (same kind, same hit points)."""
    state = run.state
    monsters = [m for m in state.board.monsters if m.id in group]
    if len({(m.kind, m.hp) for m in monsters}) <= 1:
        hurt(run, monsters[0].id, structure)
        return
    run.emit(
        "damage_pending",
        {"seat": acting_seat(state), "arc": arc, "structure": structure, "candidates": [m.id for m in monsters]},
    )


def _destroy_tower(run: Run, arc: int) -> None:
    run.emit("tower_destroyed", {"arc": arc})
    state = run.state
    assert state.config is not None
    if not state.config.options.my_home_is_my_castle or not state.board.towers:
        return
    house = state.house
    if arc == house.kings_tower:
        run.emit("hand_size_changed", {"hand_size": max(1, house.hand_size - 1)})
        owing = [seat for seat in living_castle_seats(state) if state.cards.hands[seat]]
        if owing:
            run.emit("discards_owed", {"seats": owing, "reason": "kings_tower"})
        return
    owner = dict(house.claims).get(arc)
    if owner is None or owner in house.eliminated:
        return
    claimed = {a for a, _ in house.claims}
    spares = [a for a in sorted(state.board.towers) if a not in claimed and a != house.kings_tower]
    if spares:
        run.emit("tower_claimed", {"seat": owner, "arc": spares[0]})
    else:
        run.emit("player_eliminated", {"seat": owner})


def resolve_token(
    run: Run, token: str, source: str, rng: Rng, extra: dict[str, Any], arc: int | None = None
) -> None:
    """Reveal one monster token and resolve it (rules file §7.6, §9, boss effects §6)."""
    kind = TOKEN_KIND[token]
    if kind.is_monster:
        roll = None
        if arc is None:
            roll = arc = roll_die(run.state, rng)
        placed = {"monster": token, "ring": int(Ring.FOREST), "arc": arc, "roll": roll, "source": source}
        run.emit("monster_placed", {**placed, **extra})
        _boss_effect(run, token, arc, rng)
        return
    name = kind.name
    if name == "giant_boulder":
        roll = roll_die(run.state, rng)
        run.emit("token_revealed", {"token": token, "source": source, "roll": roll, **extra})
        _roll_boulder(run, roll)
        return
    run.emit("token_revealed", {"token": token, "source": source, **extra})
    if name in COLOUR_MOVES:
        colour = COLOUR_MOVES[name]
        move_monsters(run, lambda m: ARC_COLOUR[m.arc] is colour, 0, name)
    elif name == "move_clockwise":
        move_monsters(run, everyone, CLOCKWISE, name)
    elif name == "move_counterclockwise":
        move_monsters(run, everyone, -CLOCKWISE, name)
    elif name in PLAGUES:
        soldier = PLAGUES[name]
        for seat in living_castle_seats(run.state):
            lost = [c for c in run.state.cards.hands[seat] if CARD_KIND[c].soldier is soldier]
            if lost:
                run.emit("cards_discarded", {"seat": seat, "cards": lost, "reason": name})
    elif name == "all_discard_1":
        owing = [seat for seat in living_castle_seats(run.state) if run.state.cards.hands[seat]]
        if owing:
            run.emit("discards_owed", {"seats": owing, "reason": name})
    elif name in EXTRA_DRAWS:
        _extra_draws(run, EXTRA_DRAWS[name], rng)


def _extra_draws(run: Run, count: int, rng: Rng) -> None:
    """Draw 3 / Draw 4 / Goblin King: queue more draws, or, for the Overlord, draw that many
    tokens into the hidden hand and allow that many more plays."""
    assert run.state.config is not None
    if run.state.config.overlord is not None:
        overlord_draw(run, count, count, rng)
    else:
        run.emit("draws_queued", {"count": count})


def _boss_effect(run: Run, boss: str, arc: int, rng: Rng) -> None:
    name = TOKEN_KIND[boss].name
    if name not in ("goblin_king", "orc_warlord", "troll_mage", "healer"):
        return
    assert run.state.config is not None
    moves_self = run.state.config.options.boss_moves_self
    if name == "goblin_king":
        _extra_draws(run, 3, rng)
    elif name == "orc_warlord":
        colour = ARC_COLOUR[arc]
        move_monsters(run, lambda m: ARC_COLOUR[m.arc] is colour and (moves_self or m.id != boss), 0, name)
    elif name == "troll_mage":
        move_monsters(run, lambda m: moves_self or m.id != boss, 0, name)
    else:
        healed = [[m.id, m.hp + 1] for m in run.state.board.monsters if m.hp < m.max_hp]
        if healed:
            run.emit("monsters_healed", {"monsters": healed})


def _boulder_path(arc: int) -> list[tuple[str, int, int]]:
    """Rules file §9: in from the Forest of ``arc``, across the castle, out through the opposite arc."""
    far = opposite(arc)
    inward = [("space", ring, arc) for ring in (Ring.FOREST, Ring.ARCHER, Ring.KNIGHT, Ring.SWORDSMAN)]
    outward = [("space", ring, far) for ring in (Ring.SWORDSMAN, Ring.KNIGHT, Ring.ARCHER, Ring.FOREST)]
    return [*inward, ("wall", 0, arc), ("castle", 0, arc), ("castle", 0, far), ("wall", 0, far), *outward]


def _roll_boulder(run: Run, arc: int) -> None:
    for what, ring, at in _boulder_path(arc):
        board = run.state.board
        if what == "wall":
            if at in board.fortified:
                run.emit("fortify_removed", {"arc": at})
                return
            if at in board.walls:
                run.emit("wall_destroyed", {"arc": at})
                return
            continue
        if what == "castle":
            if at in board.towers:
                _destroy_tower(run, at)
                return
            ring = Ring.CASTLE
        for m in board.monsters:
            if m.ring == ring and m.arc == at:
                slay(run, m.id, "giant_boulder")
