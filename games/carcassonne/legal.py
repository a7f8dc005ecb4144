"""Carcassonne's legal moves: who owes a command, and every command ``decide`` accepts from a seat
now (the placements of the drawn tile, the follower spots of the placed one, ``pass``)."""

from __future__ import annotations

from typing import Any

from games.carcassonne.state import FollowerKind, Phase, State
from games.carcassonne.tiles import FIELD
from games.tileboard import free_spots

__all__ = ["Command", "allowed_kind", "follower_moves", "legal_moves", "owing_seat", "waiting_for"]

Command = dict[str, Any]


def allowed_kind(state: State, seat: int, kind: str) -> bool:
    """``seat`` has a follower of ``kind`` left in its supply."""
    normal, large = state.supply[seat]
    return normal > 0 if kind == FollowerKind.NORMAL.value else large > 0


# --- legal moves ----------------------------------------------------------------------------


def owing_seat(state: State) -> int | None:
    """The seat that owes a command: only ever the current one (the tile, then the follower
    step); ``None`` between and after."""
    return state.current if state.phase in (Phase.PLACE_TILE, Phase.PLACE_FOLLOWER) else None


def waiting_for(state: State) -> list[int]:
    seat = owing_seat(state)
    return [] if seat is None else [seat]


def legal_moves(state: State, seat: int | None) -> list[Command]:
    if seat != state.current:
        return []
    if state.phase is Phase.PLACE_TILE:
        tile = state.options.tiles.tiles[state.tile_to_place]
        return [{"type": "place_tile", "args": {"x": x, "y": y, "rotation": r}}
                for x, y, r in state.table.legal_placements(tile)]
    if state.phase is Phase.PLACE_FOLLOWER:
        return [*follower_moves(state, seat), {"type": "pass", "args": {}}]
    return []


def follower_moves(state: State, seat: int) -> list[Command]:
    """One place_follower per free segment of the placed tile and allowed kind."""
    kinds = [k.value for k in FollowerKind if allowed_kind(state, seat, k.value)]
    if not kinds:
        return []
    x, y = state.placed_at
    farmers = state.options.farmers
    out: list[Command] = []
    for spot in free_spots(state.table, x, y, middle_first=True):
        if not farmers and spot.feature.kind == FIELD:
            continue
        out.extend({"type": "place_follower", "args": {"at": spot.at, "kind": k}} for k in kinds)
    return out
