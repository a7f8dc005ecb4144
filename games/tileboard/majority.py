"""Who controls a feature: the owner(s) with the greatest total follower weight."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum

from games.tileboard.board import Follower

__all__ = ["Ties", "majority", "weights_by_owner"]


class Ties(Enum):
    """What a tie for the greatest weight means."""

    ALL_SCORE = "all"
    """Every tied owner scores in full (Carcassonne)."""
    NOBODY_SCORES = "none"
    """A tie means nobody controls the feature."""


def weights_by_owner(followers: Iterable[Follower], weight: Callable[[Follower], int] = lambda f: 1) -> dict[int, int]:
    out: dict[int, int] = {}
    for f in followers:
        out[f.owner] = out.get(f.owner, 0) + weight(f)
    return out


def majority(
    followers: Iterable[Follower],
    weight: Callable[[Follower], int] = lambda f: 1,
    ties: Ties = Ties.ALL_SCORE,
) -> tuple[int, ...]:
    """Owners with the greatest weight, ascending; empty without followers (or on a tie with
    :attr:`Ties.NOBODY_SCORES`).

    >>> majority([Follower(0, "normal", 0, 0, 0), Follower(1, "large", 1, 0, 0)],
    ...          weight=lambda f: 2 if f.kind == "large" else 1)
    (1,)
    """
    totals = weights_by_owner(followers, weight)
    if not totals:
        return ()
    best = max(totals.values())
    if best <= 0:
        return ()
    winners = tuple(sorted(owner for owner, w in totals.items() if w == best))
    if len(winners) > 1 and ties is Ties.NOBODY_SCORES:
        return ()
    return winners
