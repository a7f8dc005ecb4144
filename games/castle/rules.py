"""The Castle's rules: setup, ``decide`` and the legal moves, over the engine's dataset.

A turn (seat 0 starts; seats alternate; an extra-turn wall tile repeats a seat):

1. ``place_tile {"x", "y", "rotation"}``: the drawn tile goes on an empty interior space touching
   a placed tile or a start space along a full edge; only paths must match.
2. ``place_follower {"at", "kind"}`` on a free feature of that tile, or ``pass``.
3. Every path, house, tower and chapel the tile completed is scored (its own features and the
   buildings of other kinds it closed from outside), the placing player's own features first, in
   the order that player picks with ``score {"feature"}`` when there is a choice; a doubling wall
   tile is played with ``use_wall_tile {"tile", "target"}`` before the feature is scored. Scores
   move markers on the wall; a marker ending exactly on a corner tower that still holds a wall
   tile takes it (drawn at that moment, face up). See :mod:`games.castle.scoring`.
4. ``use_wall_tile {"tile": "extra_turn"}`` or ``end_turn`` when an extra turn is possible.
5. Followers on the features completed this turn return; the next tile is drawn (unplaceable
   draws are set aside). Whatever leaves no choice happens at once, in the same command.

The game ends when no tile is left to draw; then the keep, courts, end-game wall tiles and (with
the Falcon) the aerie bonus are scored. Every random outcome (the next castle tile, the wall tile
found on a tower) is written into an event when it happens: under ``donjon-draw-2`` it is the next
of its pile's deal (the castle tiles and the wall tiles are each dealt once, as the game starts),
under the older schemes a draw of the service's rng of that decision.

Where things are: the legal moves and the queries behind them (which ``decide`` checks with too)
are in :mod:`games.castle.legal`; here are the running :class:`Emit`, setup, ``decide``, the
commands and the automatic steps. Every function takes the engine's
:class:`~games.castle.tables.CastleTables` first: the dataset and what is derived from it (the
boards, the wall, the wall-tile kinds).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from games.base import (
    Arg,
    BadCommand,
    Event,
    IllegalMove,
    NotYourTurn,
    Rng,
    UnknownCommand,
    check_accepting,
    check_args,
    int_arg,
    parse_command,
    public_options,
    secret_fields,
    str_arg,
)
from games.castle.data import WallEffect
from games.castle.evolve import evolve
from games.castle.legal import (
    COMMANDS,
    FOLLOWER_KINDS,
    ROLES,
    Command,
    doubling_options,
    extra_turn_tiles,
    follower_spots,
    legal_moves,
    naming_args,
    owing_seat,
    placed_tile,
    ref_text,
    scoring_choices,
    tile_placements,
    usable_wall_tiles,
    waiting_for,
)
from games.castle.scoring import completed_feature, final_scoring, score_feature
from games.castle.state import CastleState, FeatureRef, Phase
from games.castle.tables import CastleTables
from games.tileboard import (
    ROTATIONS,
    Board,
    Feature,
    draw_sequence,
    draw_until_placeable,
    find_segment,
    follower_record,
    segment_name,
)

__all__ = [
    "COMMANDS",
    "FOLLOWER_KINDS",
    "ROLES",
    "ARGS",
    "Emit",
    "completed_feature",
    "decide",
    "doubling_options",
    "extra_turn_tiles",
    "follower_spots",
    "legal_moves",
    "naming_args",
    "owing_seat",
    "placed_tile",
    "scoring_choices",
    "setup",
    "tile_placements",
    "usable_wall_tiles",
    "waiting_for",
]


class Emit:
    """Collects a command's events and folds them into the running state, so later decisions
    in the same command see their effect (a tower taken by the first scoring). Folding waits
    until the state is read: a command whose last event is never looked at (``place_tile``)
    does not pay for it twice."""

    __slots__ = ("_state", "_unfolded", "engine", "events", "rng")

    def __init__(self, engine: CastleTables, state: CastleState, rng: Rng) -> None:
        self.engine, self._state, self._unfolded, self.rng = engine, state, 0, rng
        self.events: list[Event] = []

    def __call__(self, type_: str, **payload: Any) -> None:
        self.events.append(Event(type_, payload))
        self._unfolded += 1

    @property
    def state(self) -> CastleState:
        if self._unfolded:
            engine = self.engine
            for event in self.events[len(self.events) - self._unfolded :]:
                self._state = evolve(engine, self._state, event)
            self._unfolded = 0
        return self._state


# --- setup and decide ------------------------------------------------------------------------------


def setup(engine: CastleTables, options: Mapping[str, Any], rng: Rng) -> list[Event]:
    """``game_started`` (a scripted ``tile_order`` only as its commitment) and the first draw."""
    em = Emit(engine, CastleState(), rng)
    order = options["tile_order"]
    total = len(order) if order else sum(engine.dataset.counts[t.id] for t in engine.tile_set(options["falcon"]))
    em("game_started", seats=2, options=public_options(options, engine.secret_options), dataset=engine.dataset.name,
       tiles=total, **secret_fields(engine.secret_options, options, rng))
    _draw_next(em, 0)
    return em.events


def decide(engine: CastleTables, state: CastleState, seat: int, cmd: Command, rng: Rng) -> list[Event]:
    """Events for ``cmd`` by ``seat``, checked in the order :mod:`games.base` documents.

    :raises RuleError: ``game_over``, ``bad_command`` (malformed args), ``unknown_command``,
        ``not_your_turn``, ``illegal_move`` (not possible now, or not allowed).
    """
    check_accepting(started=state.phase is not Phase.NOT_STARTED, over=state.phase is Phase.OVER)
    kind, args = parse_command(cmd)
    handler = _COMMANDS.get(kind)
    if handler is None:
        raise UnknownCommand(f"castle has no command {kind!r} (commands: {', '.join(COMMANDS)})")
    if seat != state.active:
        raise NotYourTurn(f"it is seat {state.active}'s turn, not seat {seat!r}'s")
    check_args(kind, args, ARGS[kind])
    em = Emit(engine, state, rng)
    handler(em, seat, args)
    return em.events


# --- commands -----------------------------------------------------------------------------------------


def _need_phase(em: Emit, phase: Phase, command: str) -> None:
    if em.state.phase is not phase:
        raise IllegalMove(f"{command} is not possible now: the game waits for {em.state.phase.value}")


def _place_tile(em: Emit, seat: int, args: dict[str, Any]) -> None:
    _need_phase(em, Phase.PLACE_TILE, "place_tile")
    x = int_arg(args, "x", "place_tile")
    y = int_arg(args, "y", "place_tile")
    rotation = int_arg(args, "rotation", "place_tile")
    if rotation not in ROTATIONS:
        raise BadCommand(f"place_tile rotation must be one of {list(ROTATIONS)}, got {rotation!r}")
    state = em.state
    assert state.board is not None and state.tile is not None
    tile = em.engine.dataset.tile(state.tile)
    board = state.board
    if not board.is_legal(tile, x, y, rotation):
        raise IllegalMove(f"tile {tile.id} rotated {rotation} cannot go at ({x}, {y}): {_why_not(board, x, y)}")
    em("tile_placed", seat=seat, tile=tile.id, x=x, y=y, rotation=rotation)


def _why_not(board: Board, x: int, y: int) -> str:
    if (x, y) in board.cells:
        return "the space is taken"
    if not board.rules.is_playable(x, y):
        return "it is not a space inside the castle wall"
    if (x, y) not in board.frontier:
        return "it touches no tile and no start space along a full edge"
    return "a path would be interrupted (paths must continue across every edge)"


def _place_follower(em: Emit, seat: int, args: dict[str, Any]) -> None:
    _need_phase(em, Phase.PLACE_FOLLOWER, "place_follower")
    at = str_arg(args, "at", "place_follower")
    kind = str_arg(args, "kind", "place_follower", "normal")
    if kind not in FOLLOWER_KINDS:
        raise BadCommand(f"place_follower kind must be one of {', '.join(FOLLOWER_KINDS)}, got {kind!r}")
    if kind != "normal" and not em.state.options.falcon:
        raise BadCommand(f"place_follower kind {kind!r} exists only with the Falcon")
    state = em.state
    assert state.board is not None
    placed = placed_tile(state)
    seg = find_segment(placed, at)
    if seg is None:
        names = sorted({segment_name(placed, i) for i in range(len(placed.tile.segments))})
        raise BadCommand(f"place_follower at {at!r} names no part of tile {placed.tile.id} (try {', '.join(names)})")
    feature = state.board.feature_of(placed.x, placed.y, seg)
    role = args.get("role")
    if role is not None and role != ROLES[feature.kind]:
        raise BadCommand(f"a follower at {at!r} is a {ROLES[feature.kind]}, not a {role!r}")
    for _, spot_kind, spot_role, spot_feature in follower_spots(em.engine, state, seat):
        if spot_feature.id == feature.id and spot_kind == kind:
            em("follower_placed", seat=seat, x=placed.x, y=placed.y, at=segment_name(placed, seg), kind=kind,
               role=spot_role)
            _continue(em)
            return
    raise IllegalMove(f"no {kind} follower may go at {at!r}: {_why_no_follower(state, seat, feature, kind)}")


def _why_no_follower(state: CastleState, seat: int, feature: Feature, kind: str) -> str:
    supply = state.seats[seat]
    if kind == "normal" and supply.followers == 0:
        return "no follower left in the supply"
    if kind == "prince" and not supply.prince:
        return "the prince is not in the supply"
    if kind == "falconer" and not supply.falconer:
        return "the falconer is not in the supply"
    if feature.followers:
        return f"that {feature.kind} already holds a follower"
    return f"the {kind} may not go on a {feature.kind} this tile completes (it would score at once)"


def _pass(em: Emit, seat: int, args: dict[str, Any]) -> None:
    _need_phase(em, Phase.PLACE_FOLLOWER, "pass")
    em("follower_passed", seat=seat)
    _continue(em)


def _score(em: Emit, seat: int, args: dict[str, Any]) -> None:
    _need_phase(em, Phase.SCORE, "score")
    state = em.state
    choices = scoring_choices(em.engine, state)
    target = _completed_named(state, args, "feature", "score")
    if target not in choices:
        raise IllegalMove(
            f"feature {ref_text(state, target)!r} cannot be scored now: the placing player's own features "
            f"come first (next: {', '.join(ref_text(state, r) for r in choices)})"
        )
    score_feature(em, target)
    _continue(em)


def _completed_named(state: CastleState, args: dict[str, Any], key: str, command: str) -> FeatureRef:
    """The reference of the completed feature a client names with ``args[key]``: a port of it
    on the tile at (``x``, ``y``), by default the tile just placed."""
    at = str_arg(args, key, command)
    placed = placed_tile(state)
    x, y = placed.x, placed.y
    if "x" in args or "y" in args:
        x, y = int_arg(args, "x", command), int_arg(args, "y", command)
    assert state.board is not None
    named = state.board.cells.get((x, y))
    seg = None if named is None else find_segment(named, at)
    if seg is not None:
        fid = state.board.feature_of(x, y, seg).id
        for ref in state.pending:
            if completed_feature(state, ref).id == fid:
                return ref
    waiting = ", ".join(ref_text(state, r) for r in state.pending) or "none"
    raise IllegalMove(
        f"{command}: {at!r} at ({x}, {y}) is not a feature completed this turn and waiting to be scored "
        f"(waiting: {waiting})"
    )


def _use_wall_tile(em: Emit, seat: int, args: dict[str, Any]) -> None:
    kind_name = str_arg(args, "tile", "use_wall_tile")
    engine = em.engine
    kind = engine.wall_tile_kinds.get(kind_name)
    if kind is None:
        raise BadCommand(f"use_wall_tile: no wall tile {kind_name!r} (tiles: {', '.join(engine.wall_tile_kinds)})")
    state = em.state
    if kind_name not in [h.kind for h in state.seats[seat].wall_tiles]:
        raise IllegalMove(f"use_wall_tile: seat {seat} holds no {kind_name!r} wall tile")
    if kind_name not in usable_wall_tiles(state, seat):
        raise IllegalMove(
            f"use_wall_tile: a wall tile taken this turn can be used from the next turn on ({kind_name!r})"
        )
    if kind.effect is WallEffect.DOUBLE:
        if state.phase is not Phase.SCORE:
            raise IllegalMove(
                f"use_wall_tile: {kind_name!r} doubles a {kind.feature} being scored on your turn; none is now"
            )
        target = _completed_named(state, args, "target", "use_wall_tile")
        if (kind_name, target) not in doubling_options(engine, state):
            raise IllegalMove(
                f"use_wall_tile: {kind_name!r} cannot double {ref_text(state, target)!r} (it must be a {kind.feature} "
                "you score next, not already doubled, without your prince)"
            )
        em("wall_tile_used", seat=seat, tile=kind_name, **naming_args(state, target, "target"))
        _continue(em)
        return
    if kind.effect is WallEffect.EXTRA_TURN:
        if kind_name not in extra_turn_tiles(engine, state):
            why = "no castle tile is left" if state.remaining == 0 else "it is used at the end of your turn"
            raise IllegalMove(f"use_wall_tile: {kind_name!r} cannot be used now: {why}")
        em("wall_tile_used", seat=seat, tile=kind_name)
        _continue(em)
        return
    raise IllegalMove(
        f"use_wall_tile: {kind_name!r} ({kind.effect.value}) is applied automatically at the end of the game"
    )


def _end_turn_command(em: Emit, seat: int, args: dict[str, Any]) -> None:
    _need_phase(em, Phase.END_TURN, "end_turn")
    _end_turn(em)


_COMMANDS: dict[str, Callable[[Emit, int, dict[str, Any]], None]] = {
    "place_tile": _place_tile,
    "place_follower": _place_follower,
    "pass": _pass,
    "score": _score,
    "use_wall_tile": _use_wall_tile,
    "end_turn": _end_turn_command,
}
assert tuple(_COMMANDS) == COMMANDS

_AT_TILE = {"x": Arg("int", required=False), "y": Arg("int", required=False)}
"""Where a named feature is, when not on the tile just placed (:func:`naming_args`)."""
ARGS: dict[str, dict[str, Arg]] = {
    "place_tile": {"x": Arg("int"), "y": Arg("int"), "rotation": Arg("int")},
    "place_follower": {"at": Arg("str"), "kind": Arg("str", required=False), "role": Arg("str", required=False)},
    "pass": {},
    "score": {"feature": Arg("str"), **_AT_TILE},
    "use_wall_tile": {"tile": Arg("str"), "target": Arg("str", required=False), **_AT_TILE},
    "end_turn": {},
}
"""The args each command takes (:func:`games.base.check_args`)."""
assert tuple(ARGS) == COMMANDS


# --- automatic steps ------------------------------------------------------------------------------


def _continue(em: Emit) -> None:
    """Carry on while nothing is left to choose: score, end the turn, draw."""
    while True:
        state = em.state
        if state.phase is Phase.SCORE:
            choices = scoring_choices(em.engine, state)
            if len(choices) == 1 and not doubling_options(em.engine, state):
                score_feature(em, choices[0])
                continue
            return
        if state.phase is Phase.END_TURN:
            if extra_turn_tiles(em.engine, state):
                return
            _end_turn(em)
        return


def _end_turn(em: Emit) -> None:
    state = em.state
    assert state.board is not None
    back: list[list[Any]] = []
    for ref in state.completed:
        feature = completed_feature(state, ref)
        back.extend(follower_record(state.board, f) for f in feature.followers)
    if back:
        em("followers_returned", followers=back)
    extra = em.state.extra_turns > 0 and em.state.remaining > 0
    following = state.active if extra else 1 - state.active
    em("turn_ended", seat=state.active, next=following, extra_turn=extra)
    _draw_next(em, following)


def _draw_next(em: Emit, seat: int) -> None:
    state = em.state
    assert state.board is not None
    order = state.options.tile_order
    rest = None if order is None else order[len(order) - state.remaining :]
    drawn = draw_sequence(em.rng, state.stack, rest, contents=em.engine.pile(state.options.falcon))
    set_aside, tile_id = draw_until_placeable(state.board, em.engine.dataset.tile, drawn)
    for unplaceable in set_aside:
        em("tile_set_aside", tile=unplaceable)
    if tile_id is not None:
        em("tile_drawn", seat=seat, tile=tile_id)
    else:
        final_scoring(em)
