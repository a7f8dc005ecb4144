"""The Castle's ``evolve``: one event applied to the state, which is never mutated.

Each event type has one handler ``(engine, state, payload) -> state`` (the engine holds the
dataset: tiles, start boards, wall-tile kinds). An event type without a handler raises
:class:`games.base.UnknownEvent` naming it. The events and their payloads are listed in
docs/games/castle.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games.base import Event, UnknownEvent
from games.castle.data import WallEffect
from games.castle.scoring import completed_by_placement
from games.castle.state import CastleState, HeldWallTile, Keep, Options, Phase, SeatState, with_seat
from games.castle.tables import CastleTables
from games.castle.track import Marker
from games.tileboard import Board, Follower, feature_at, find_segment, take

__all__ = ["evolve"]

Payload = dict[str, Any]


def evolve(engine: CastleTables, state: CastleState, event: Event) -> CastleState:
    """Apply one event; never mutates ``state``. :class:`UnknownEvent` for a type it does not know."""
    handler = _HANDLERS.get(event.type)
    if handler is None:
        raise UnknownEvent(engine.name, event.type)
    return handler(engine, state, event.payload)


def _game_started(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    o = p["options"]
    order = p.get("tile_order")
    opts = Options(o["falcon"], o["ties"], o["halt_at_gates"], None if order is None else tuple(order))
    dataset = engine.dataset
    seat = SeatState(followers=dataset.followers_in_supply, prince=opts.falcon, falconer=opts.falcon)
    if order:
        stack = tuple(sorted((t, order.count(t)) for t in set(order)))
    else:
        stack = tuple(sorted((t.id, dataset.counts[t.id]) for t in engine.tile_set(opts.falcon)))
    return state.but(
        phase=Phase.PLACE_TILE,
        options=opts,
        dataset=p["dataset"],
        board=engine.start_board(opts.falcon),
        seats=(seat, seat),
        active=0,
        turn=1,
        stack=stack,
        remaining=sum(n for _, n in stack),
        towers=tuple(t.token for t in dataset.track.towers),
        wall_pool=tuple((k.name, dataset.wall_tile_copies) for k in dataset.wall_tiles),
        aerie_supply=dataset.aerie_tokens if opts.falcon else 0,
    )


def _tile_drawn(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    return state.but(
        tile=p["tile"], stack=take(state.stack, p["tile"]), remaining=state.remaining - 1,
        active=p["seat"], phase=Phase.PLACE_TILE,
    )


def _tile_set_aside(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    return state.but(
        stack=take(state.stack, p["tile"]), remaining=state.remaining - 1, set_aside=(*state.set_aside, p["tile"])
    )


def _tile_placed(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    assert state.board is not None
    board = state.board.place(engine.dataset.tile(p["tile"]), p["x"], p["y"], p["rotation"], check=False)
    return state.but(board=board, placed=(p["x"], p["y"]), tile=None, phase=Phase.PLACE_FOLLOWER)


def _follower_placed(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    board, seat, kind = state.board, p["seat"], p["kind"]
    assert board is not None
    seg = find_segment(board.cells[(p["x"], p["y"])], p["at"])
    assert seg is not None
    board = board.with_follower(Follower(seat, kind, p["x"], p["y"], seg))
    supply = state.seats[seat]
    if kind == "prince":
        supply = supply.but(prince=False)
    elif kind == "falconer":
        supply = supply.but(falconer=False)
    else:
        supply = supply.but(followers=supply.followers - 1)
    seats = (*state.seats[:seat], supply, *state.seats[seat + 1 :])
    return _enter_scoring(state, board, seats=seats)


def _follower_passed(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    assert state.board is not None
    return _enter_scoring(state, state.board)


def _enter_scoring(state: CastleState, board: Board, **changes: Any) -> CastleState:
    """The state after the follower step, on ``board`` (with ``changes``), in one copy: the
    features the placed tile completed, to score, or straight on to the turn's end."""
    assert state.placed is not None
    completed = completed_by_placement(board, *state.placed)
    phase = Phase.SCORE if completed else Phase.END_TURN
    return state.but(board=board, completed=completed, scored=(), doubled=(), phase=phase, **changes)


def _feature_scored(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    scored = (*state.scored, (p["x"], p["y"], p["feature"]))
    # In one copy: once nothing is pending (``CastleState.pending`` of the copy), on to the turn's end.
    if all(at in scored for at in state.completed):
        return state.but(scored=scored, phase=Phase.END_TURN)
    return state.but(scored=scored)


def _marker_moved(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    return with_seat(state, p["seat"], marker=Marker(p["to"], p["gate"]))


def _wall_tile_taken(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    towers = list(state.towers)
    towers[p["tower"]] = False
    held = (*state.seats[p["seat"]].wall_tiles, HeldWallTile(p["tile"], state.turn))
    state = with_seat(state, p["seat"], wall_tiles=held)
    return state.but(towers=tuple(towers), wall_pool=take(state.wall_pool, p["tile"]))


def _wall_tile_used(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    held = list(state.seats[p["seat"]].wall_tiles)
    for i, h in enumerate(held):
        if h.kind == p["tile"] and h.taken_turn < state.turn:
            del held[i]
            break
    state = with_seat(state, p["seat"], wall_tiles=tuple(held))
    if engine.wall_tile_kind(p["tile"]).effect is WallEffect.EXTRA_TURN:
        return state.but(extra_turns=state.extra_turns + 1)
    assert state.placed is not None
    x, y = state.placed
    return state.but(doubled=(*state.doubled, (p.get("x", x), p.get("y", y), p["target"])))


def _aeries_returned(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    for seat in (0, 1):
        state = with_seat(state, seat, aeries=state.seats[seat].aeries - p["each"])
    return _aerie_supply_left(engine, state)


def _aeries_taken(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    state = with_seat(state, p["seat"], aeries=state.seats[p["seat"]].aeries + p["count"])
    return _aerie_supply_left(engine, state)


def _aerie_supply_left(engine: CastleTables, state: CastleState) -> CastleState:
    """The tokens on the table that nobody holds (none once the held count passes the 12)."""
    return state.but(aerie_supply=max(0, engine.dataset.aerie_tokens - sum(s.aeries for s in state.seats)))


def _keep_moved(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    cells = tuple((x, y) for x, y in p["tiles"])
    return with_seat(state, p["seat"], keep=Keep(p["size"], cells))


def _followers_returned(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    board = state.board
    assert board is not None
    fids = set()
    seats = list(state.seats)  # every figure back in its supply, then one copy of the state
    for owner, x, y, at, kind in p["followers"]:
        feature = feature_at(board, x, y, at)
        assert feature is not None
        fids.add(feature.id)
        supply = seats[owner]
        if kind == "prince":
            seats[owner] = supply.but(prince=True)
        elif kind == "falconer":
            seats[owner] = supply.but(falconer=True)
        else:
            seats[owner] = supply.but(followers=supply.followers + 1)
    return state.but(board=board.without_followers(fids), seats=tuple(seats))


def _turn_ended(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    return state.but(
        active=p["next"],
        turn=state.turn + 1,
        phase=Phase.PLACE_TILE,
        tile=None,
        placed=None,
        completed=(),
        scored=(),
        doubled=(),
        extra_turns=state.extra_turns - 1 if p["extra_turn"] else 0,
    )


def _final_scored(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    return state.but(final=(*state.final, dict(p)))


def _game_ended(engine: CastleTables, state: CastleState, p: Payload) -> CastleState:
    return state.but(phase=Phase.OVER, tile=None, winners=tuple(p["winners"]))


_HANDLERS: dict[str, Callable[[CastleTables, CastleState, Payload], CastleState]] = {
    "game_started": _game_started,
    "tile_drawn": _tile_drawn,
    "tile_set_aside": _tile_set_aside,
    "tile_placed": _tile_placed,
    "follower_placed": _follower_placed,
    "follower_passed": _follower_passed,
    "feature_scored": _feature_scored,
    "marker_moved": _marker_moved,
    "wall_tile_taken": _wall_tile_taken,
    "wall_tile_used": _wall_tile_used,
    "aeries_returned": _aeries_returned,
    "aeries_taken": _aeries_taken,
    "keep_moved": _keep_moved,
    "followers_returned": _followers_returned,
    "turn_ended": _turn_ended,
    "final_scored": _final_scored,
    "game_ended": _game_ended,
}
