"""Carcassonne's ``evolve``: one event applied to the state, which is never mutated.

Events (payloads): ``game_started {seats, options, start, pile, tile_order, tile_order_sha256,
secret_salt}``, ``tile_drawn {seat, tile, remaining}``, ``tile_discarded {seat, tile,
remaining}``, ``tile_placed {seat, tile, x, y, rotation}``, ``follower_placed {seat, x, y, at,
kind}``, ``follower_skipped {seat}``, ``feature_scored {...}`` (see
:mod:`games.carcassonne.scoring`), ``game_ended {scores, winners}``. An unknown event type raises
:class:`games.base.UnknownEvent`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games.base import Event, UnknownEvent
from games.carcassonne.board import start_board
from games.carcassonne.scoring import segment_at
from games.carcassonne.state import LARGE_FOLLOWERS, NORMAL_FOLLOWERS, FollowerKind, Phase, State, Turn, options_from
from games.tileboard import Follower, Placed

__all__ = ["evolve"]

Payload = dict[str, Any]

_LARGE = FollowerKind.LARGE.value
"""The large follower's kind as events name it (an enum's ``value`` is a property: read once)."""


def evolve(state: State, event: Event) -> State:
    """Apply one event; never mutates ``state``. :class:`UnknownEvent` for a type it does not know.
    The engine's ``evolve`` is this function (one call from the fold to the handler)."""
    handler = _HANDLERS.get(event.type)
    if handler is None:
        raise UnknownEvent("carcassonne", event.type)
    return handler(state, event.payload)


def _game_started(state: State, p: Payload) -> State:
    opts = options_from({**p["options"], "tile_order": p["tile_order"]})
    tiles = opts.tiles
    counts = tiles.pile_counts()
    large = LARGE_FOLLOWERS if opts.inns_cathedrals else 0
    return State(
        phase=Phase.PLACE_TILE,
        options=opts,
        seats=p["seats"],
        board=start_board(tiles),
        pile=tuple(counts[tid] for tid in tiles.ids),
        order=opts.tile_order,
        supply=((NORMAL_FOLLOWERS, large),) * p["seats"],
        scores=(0,) * p["seats"],
    )


def _tile_drawn(state: State, p: Payload) -> State:
    pile, order = _taken(state, p["tile"])
    return state.but(pile=pile, order=order, phase=Phase.PLACE_TILE, current=p["seat"], tile=p["tile"], placed=None)


def _tile_discarded(state: State, p: Payload) -> State:
    pile, order = _taken(state, p["tile"])
    return state.but(pile=pile, order=order, discarded=(*state.discarded, p["tile"]))


def _tile_placed(state: State, p: Payload) -> State:
    tile = state.options.tiles.tiles[p["tile"]]
    board = state.table.place(tile, p["x"], p["y"], p["rotation"], check=False)
    return state.but(board=board, phase=Phase.PLACE_FOLLOWER, tile=None, placed=(p["x"], p["y"]))


def _follower_placed(state: State, p: Payload) -> State:
    placed = state.table.cells[(p["x"], p["y"])]
    follower = Follower(p["seat"], p["kind"], p["x"], p["y"], _segment(placed, p["at"]))
    normal, large = state.supply[p["seat"]]
    if p["kind"] == _LARGE:
        large -= 1
    else:
        normal -= 1
    return state.but(
        board=state.table.with_follower(follower),
        supply=_set(state.supply, p["seat"], (normal, large)),
        turns=(*state.turns, _turn(state, p["seat"], p["at"], p["kind"])),
        phase=Phase.SCORING,
    )


def _follower_skipped(state: State, p: Payload) -> State:
    return state.but(turns=(*state.turns, _turn(state, p["seat"], None, None)), phase=Phase.SCORING)


def _game_ended(state: State, p: Payload) -> State:
    return state.but(phase=Phase.OVER, tile=None, placed=None, winners=tuple(p["winners"]))


def _taken(state: State, tile_id: str) -> tuple[tuple[int, ...], tuple[str, ...] | None]:
    """The pile and the scripted order after drawing ``tile_id`` (one of them changes)."""
    pile, order = state.pile, state.order
    if order is not None:
        return pile, order[1:]
    i = state.options.tiles.ids.index(tile_id)
    return (*pile[:i], pile[i] - 1, *pile[i + 1:]), None


def _turn(state: State, seat: int, at: str | None, kind: str | None) -> Turn:
    board, cell = state.board, state.placed
    assert board is not None and cell is not None  # after tile_placed (State.table, State.placed_at)
    placed = board.cells[cell]
    return Turn(seat, placed.tile.id, cell[0], cell[1], placed.rotation, at, kind)


def _feature_scored(state: State, p: Payload) -> State:
    scores = list(state.scores)
    for seat in p["winners"]:
        scores[seat] += p["points"]
    supply = list(state.supply)
    board = state.table
    cells = board.cells
    gone = []
    for seat, x, y, at, kind in p["followers_returned"]:
        normal, large = supply[seat]
        supply[seat] = (normal, large + 1) if kind == _LARGE else (normal + 1, large)
        gone.append((x, y, _segment(cells[(x, y)], at)))
    return state.but(scores=tuple(scores), supply=tuple(supply), board=board.without_followers_at(gone))


def _segment(placed: Placed, at: str) -> int:
    """The segment an event names (the engine wrote the name, so it exists)."""
    segment = segment_at(placed, at)
    assert segment is not None
    return segment


def _set(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*values[:index], value, *values[index + 1:])


_HANDLERS: dict[str, Callable[[State, Payload], State]] = {
    "game_started": _game_started,
    "tile_drawn": _tile_drawn,
    "tile_discarded": _tile_discarded,
    "tile_placed": _tile_placed,
    "follower_placed": _follower_placed,
    "follower_skipped": _follower_skipped,
    "feature_scored": _feature_scored,
    "game_ended": _game_ended,
}
