"""Carcassonne's rules: setup and ``decide`` (the legal moves are :mod:`games.carcassonne.legal`).

Turn flow: the tile to place is always drawn already (``view["tile"]``). ``place_tile`` puts it
down; then ``place_follower`` or ``pass`` ends the turn: the features the tile completed are
scored (:mod:`games.carcassonne.scoring`), their followers go back, and the next seat's tile is
drawn (tiles with no legal placement anywhere are discarded and the same seat draws again). When
the pile is empty the final scoring follows as events and the game is over.

Commands::

    {"type": "place_tile", "args": {"x": 1, "y": 0, "rotation": 90}}
    {"type": "place_follower", "args": {"at": "E", "kind": "normal"}}   # or "large"
    {"type": "pass", "args": {}}

``at`` is a port name of the placed tile as it lies (``Nw N Ne En E Es Se S Sw Ws W Wn``; any
port of a segment names that segment), ``monastery`` or ``inner_field``.
"""

from __future__ import annotations

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
    secret_fields,
)
from games.carcassonne.evolve import evolve
from games.carcassonne.legal import Command, allowed_kind, follower_moves, legal_moves, owing_seat, waiting_for
from games.carcassonne.scoring import INNER_FIELD, completed_scorings, final_scorings, segment_at, spot_name
from games.carcassonne.state import SECRET_OPTIONS, FollowerKind, Options, Phase, State
from games.carcassonne.tiles import FIELD, MONASTERY, START_TILE
from games.tileboard import PORT_NAMES, ROTATIONS, draw_sequence, draw_until_placeable

__all__ = ["ARGS", "decide", "follower_moves", "legal_moves", "owing_seat", "setup", "waiting_for"]

ARGS: dict[str, dict[str, Arg]] = {
    "place_tile": {"x": Arg("int"), "y": Arg("int"), "rotation": Arg("int")},
    "place_follower": {"at": Arg("str"), "kind": Arg("str", required=False)},
    "pass": {},
}
"""The args each command takes (:func:`games.base.check_args`); ``kind`` defaults to ``normal``."""


def setup(opts: Options, seats: int, rng: Rng) -> list[Event]:
    """``game_started`` (a scripted ``tile_order`` only as its commitment) and the first draw."""
    options = opts.as_dict()
    started = Event("game_started", {
        "seats": seats,
        "options": {name: value for name, value in options.items() if name not in SECRET_OPTIONS},
        "start": {"tile": START_TILE, "x": 0, "y": 0, "rotation": 0},
        "pile": len(opts.tile_order) if opts.tile_order is not None else sum(opts.tiles.pile_counts().values()),
        **secret_fields(SECRET_OPTIONS, options, rng),
    })
    state = evolve(State(), started)
    return [started, *_draw(state, 0, rng)[0]]


def decide(state: State, seat: int, cmd: Command, rng: Rng) -> list[Event]:
    """Events for ``cmd`` by ``seat``, checked in the order :mod:`games.base` documents.

    :raises GameOver: the game has ended.
    :raises BadCommand: malformed command or arguments (``bad_command``).
    :raises UnknownCommand: a type other than place_tile, place_follower, pass.
    :raises NotYourTurn: another seat acts now, or this command is not the one owed.
    :raises IllegalMove: the placement or follower spot breaks the rules.
    """
    check_accepting(started=state.phase is not Phase.NOT_STARTED, over=state.phase is Phase.OVER)
    kind, args = parse_command(cmd)
    if kind not in ARGS:
        raise UnknownCommand(f"carcassonne has no command {kind!r}; use place_tile, place_follower or pass")
    if seat != state.current:
        raise NotYourTurn(f"it is seat {state.current}'s turn, not seat {seat!r}'s")
    check_args(kind, args, ARGS[kind])
    if kind == "place_tile":
        return _decide_place_tile(state, seat, args)
    if state.phase is not Phase.PLACE_FOLLOWER:
        raise NotYourTurn(f"place the tile {state.tile} first; {kind!r} comes after place_tile")
    if kind == "pass":
        return _end_turn(state, Event("follower_skipped", {"seat": seat}), rng)
    return _decide_follower(state, seat, args, rng)


def _decide_place_tile(state: State, seat: int, args: dict[str, Any]) -> list[Event]:
    if state.phase is not Phase.PLACE_TILE:
        raise NotYourTurn("the tile is already placed; send place_follower or pass")
    x, y, rotation = (int_arg(args, k, "place_tile") for k in ("x", "y", "rotation"))
    if rotation not in ROTATIONS:
        raise BadCommand(f"place_tile: rotation must be one of {list(ROTATIONS)}, got {rotation!r}")
    tile = state.options.tiles.tiles[state.tile_to_place]
    if (x, y) in state.table.cells:
        raise IllegalMove(f"place_tile: ({x}, {y}) already holds a tile")
    if not state.table.is_legal(tile, x, y, rotation):
        raise IllegalMove(f"place_tile: tile {state.tile} rotated {rotation} does not fit at ({x}, {y}): "
                          "it must touch a placed tile along an edge and every touching side must match")
    return [Event("tile_placed", {"seat": seat, "tile": state.tile, "x": x, "y": y, "rotation": rotation})]


def _decide_follower(state: State, seat: int, args: dict[str, Any], rng: Rng) -> list[Event]:
    at, kind = args["at"], args.get("kind") or FollowerKind.NORMAL.value
    if kind not in (FollowerKind.NORMAL.value, FollowerKind.LARGE.value):
        raise BadCommand(f"place_follower: kind must be 'normal' or 'large', got {kind!r}")
    if at not in PORT_NAMES and at not in (MONASTERY, INNER_FIELD):
        raise BadCommand(f"place_follower: unknown spot {at!r}; use a port name, 'monastery' or 'inner_field'")
    x, y = state.placed_at
    placed = state.table.cells[(x, y)]
    segment = segment_at(placed, at)
    if segment is None:
        raise IllegalMove(f"place_follower: tile {placed.tile.id} has no {at!r}")
    if not allowed_kind(state, seat, kind):
        raise IllegalMove(f"place_follower: seat {seat} has no {kind} follower to place")
    if placed.tile.segments[segment].kind == FIELD and not state.options.farmers:
        raise IllegalMove(f"place_follower: farmers are off in this game; {at!r} is a field")
    if state.table.feature_of(x, y, segment).followers:
        raise IllegalMove(f"place_follower: the feature at {at!r} already holds a follower")
    event = Event("follower_placed", {"seat": seat, "x": x, "y": y, "at": spot_name(placed, segment), "kind": kind})
    return _end_turn(state, event, rng)



def _end_turn(state: State, first: Event, rng: Rng) -> list[Event]:
    events = [first]
    state = evolve(state, first)
    x, y = state.placed_at
    for _, payload in completed_scorings(state.table, x, y, state.options):
        scored = Event("feature_scored", payload)
        events.append(scored)
        state = evolve(state, scored)
    more, _ = _draw(state, (state.current + 1) % state.seats, rng)
    return events + more


def _draw(state: State, seat: int, rng: Rng) -> tuple[list[Event], State]:
    """Draw for ``seat`` until a placeable tile turns up, or score the end of the game."""
    events: list[Event] = []
    tiles = state.options.tiles
    drawn = draw_sequence(rng, tuple(zip(tiles.ids, state.pile, strict=False)), state.order, contents=tiles.pile)
    discarded, tile_id = draw_until_placeable(state.table, tiles.tiles.__getitem__, drawn)
    for kind, tid in [*(("tile_discarded", t) for t in discarded), ("tile_drawn", tile_id)]:
        if tid is None:
            break
        event = Event(kind, {"seat": seat, "tile": tid, "remaining": state.remaining - 1})
        events.append(event)
        state = evolve(state, event)
    if tile_id is not None:
        return events, state
    for _, payload in final_scorings(state.table, state.options):
        event = Event("feature_scored", payload)
        events.append(event)
        state = evolve(state, event)
    best = max(state.scores)
    ended = Event("game_ended", {"scores": list(state.scores),
                                 "winners": [s for s, v in enumerate(state.scores) if v == best]})
    events.append(ended)
    return events, evolve(state, ended)
