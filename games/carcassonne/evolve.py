"""Carcassonne's ``evolve``: one event applied to the state, which is never mutated.

Events (payloads): ``game_started {seats, options, start, pile, tile_order, tile_order_sha256,
secret_salt}``, ``tile_drawn {seat, tile, remaining}``, ``tile_discarded {seat, tile,
remaining}``, ``tile_placed {seat, tile, x, y, rotation}``, ``follower_placed {seat, x, y, at,
kind}``, ``follower_skipped {seat}``, ``feature_scored {...}`` (see
:mod:`games.carcassonne.scoring`), ``game_ended {scores, winners}``. An unknown event type raises
:class:`games.base.UnknownEvent`.
"""

from __future__ import annotations

from typing import Any

from games.base import Event, UnknownEvent
from games.carcassonne.board import start_board
from games.carcassonne.scoring import segment_at
from games.carcassonne.state import LARGE_FOLLOWERS, NORMAL_FOLLOWERS, FollowerKind, Phase, State, Turn, options_from
from games.tileboard import Follower, Placed

__all__ = ["evolve"]


def evolve(state: State, event: Event) -> State:
    p = event.payload
    match event.type:
        case "game_started":
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
        case "tile_drawn":
            return state.but(**_take(state, p["tile"]), phase=Phase.PLACE_TILE, current=p["seat"],
                             tile=p["tile"], placed=None)
        case "tile_discarded":
            return state.but(**_take(state, p["tile"]), discarded=(*state.discarded, p["tile"]))
        case "tile_placed":
            tile = state.options.tiles.tiles[p["tile"]]
            board = state.table.place(tile, p["x"], p["y"], p["rotation"], check=False)
            return state.but(board=board, phase=Phase.PLACE_FOLLOWER, tile=None, placed=(p["x"], p["y"]))
        case "follower_placed":
            placed = state.table.cells[(p["x"], p["y"])]
            follower = Follower(p["seat"], p["kind"], p["x"], p["y"], _segment(placed, p["at"]))
            normal, large = state.supply[p["seat"]]
            if p["kind"] == FollowerKind.LARGE.value:
                large -= 1
            else:
                normal -= 1
            return state.but(
                board=state.table.with_follower(follower),
                supply=_set(state.supply, p["seat"], (normal, large)),
                turns=(*state.turns, _turn(state, p["seat"], p["at"], p["kind"])),
                phase=Phase.SCORING,
            )
        case "follower_skipped":
            return state.but(turns=(*state.turns, _turn(state, p["seat"], None, None)), phase=Phase.SCORING)
        case "feature_scored":
            return _apply_scoring(state, p)
        case "game_ended":
            return state.but(phase=Phase.OVER, tile=None, placed=None, winners=tuple(p["winners"]))
    raise UnknownEvent("carcassonne", event.type)


def _take(state: State, tile_id: str) -> dict[str, Any]:
    """The pile change of drawing ``tile_id``."""
    if state.order is not None:
        return {"order": state.order[1:]}
    i = state.options.tiles.ids.index(tile_id)
    return {"pile": (*state.pile[:i], state.pile[i] - 1, *state.pile[i + 1:])}


def _turn(state: State, seat: int, at: str | None, kind: str | None) -> Turn:
    x, y = state.placed_at
    placed = state.table.cells[(x, y)]
    return Turn(seat, placed.tile.id, x, y, placed.rotation, at, kind)


def _apply_scoring(state: State, p: dict[str, Any]) -> State:
    scores = list(state.scores)
    for seat in p["winners"]:
        scores[seat] += p["points"]
    supply = [list(s) for s in state.supply]
    board = state.table
    gone = []
    for seat, x, y, at, kind in p["followers_returned"]:
        supply[seat][1 if kind == FollowerKind.LARGE.value else 0] += 1
        gone.append((x, y, _segment(board.cells[(x, y)], at)))
    board = board.without_followers_at(gone)
    return state.but(scores=tuple(scores), supply=tuple(tuple(s) for s in supply), board=board)


def _segment(placed: Placed, at: str) -> int:
    """The segment an event names (the engine wrote the name, so it exists)."""
    segment = segment_at(placed, at)
    assert segment is not None
    return segment


def _set(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*values[:index], value, *values[index + 1:])
