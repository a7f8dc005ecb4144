"""Castle Panic's scoring rules: trophy points and the Master Slayer.

The castle players win or lose together; with the ``master_slayer`` option each also keeps the
monsters its cards slew as trophies, and after a win the living player with the most trophy
points (then the most monsters slain) is Master Slayer. A tie after both shares the title.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from games.castle_panic.data import TOKEN_KIND
from games.castle_panic.state import State

__all__ = ["SeatScore", "master_slayers", "seat_scores", "trophy_points"]


class SeatScore(NamedTuple):
    seat: int
    vp: int
    """Trophy points: the sum of the slain monsters' values."""
    slain: int


def trophy_points(trophies: Iterable[str]) -> int:
    return sum(TOKEN_KIND[t].vp for t in trophies)


def seat_scores(state: State) -> list[SeatScore]:
    """Every castle seat's trophies, in seat order."""
    assert state.config is not None
    trophies = state.tokens.trophies
    return [SeatScore(seat, trophy_points(trophies[seat]), len(trophies[seat])) for seat in state.config.castle_seats]


def master_slayers(scores: Iterable[SeatScore], living: Iterable[int]) -> list[int]:
    """The Master Slayer(s) among the ``living`` seats after a win: best (points, monsters slain)."""
    alive = set(living)
    eligible = [row for row in scores if row.seat in alive]
    if not eligible:
        return []
    best = max((row.vp, row.slain) for row in eligible)
    return [row.seat for row in eligible if (row.vp, row.slain) == best]
