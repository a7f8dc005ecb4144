"""Points of The Castle's features, the chapel table and majorities.

>>> feature_points("path", tiles=4, fountains=1), feature_points("tower", tiles=3)
(8, 6)
>>> [chapel_points(n) for n in range(1, 10)]
[1, 3, 6, 10, 15, 21, 28, 36, 36]
"""

from __future__ import annotations

from typing import Iterable

from games.tileboard import Follower, Ties, majority

__all__ = ["CHAPEL_TABLE", "MARKET_POINTS", "chapel_points", "feature_points", "court_points", "controllers", "largest_empty_area"]

CHAPEL_TABLE: tuple[int, ...] = (0, 1, 3, 6, 10, 15, 21, 28, 36)
"""Falcon chapel points by tile count 0..8; 8 or more tiles score 36."""

MARKET_POINTS = 3
"""Points per market of a court at the end (4 with the market wall tile)."""


def chapel_points(tiles: int) -> int:
    return CHAPEL_TABLE[min(tiles, len(CHAPEL_TABLE) - 1)]


def feature_points(kind: str, *, tiles: int, fountains: int = 0) -> int:
    """Points of a completed (or wall-tile-scored) path, house, tower or chapel.

    A path scores 1 per tile, 2 per tile with at least one fountain (start spaces count as
    tiles); a house 1 per tile; a tower 2 per tile; a chapel by the table. Courts score only at
    the end, by markets (:func:`court_points`).
    """
    if kind == "path":
        return tiles * (2 if fountains else 1)
    if kind == "house":
        return tiles
    if kind == "tower":
        return 2 * tiles
    if kind == "chapel":
        return chapel_points(tiles)
    return 0


def court_points(markets: int, per_market: int = MARKET_POINTS) -> int:
    return markets * per_market


def controllers(followers: Iterable[Follower], *, ties_score: bool) -> tuple[int, ...]:
    """Seats that score a feature: the most followers (each figure counts one, prince and
    falconer too); a tie scores nothing unless ``ties_score``."""
    return majority(followers, ties=Ties.ALL_SCORE if ties_score else Ties.NOBODY_SCORES)


def largest_empty_area(interior: Iterable[tuple[int, int]], occupied: Iterable[tuple[int, int]]) -> int:
    """Size of the largest orthogonally connected group of empty interior spaces.

    >>> largest_empty_area({(0, 0), (1, 0), (3, 0)}, {(1, 0)})
    1
    """
    empty = set(interior) - set(occupied)
    best = 0
    while empty:
        todo = [empty.pop()]
        size = 1
        while todo:
            x, y = todo.pop()
            for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if n in empty:
                    empty.remove(n)
                    todo.append(n)
                    size += 1
        best = max(best, size)
    return best
