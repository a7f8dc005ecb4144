"""Scoring Carcassonne features, during the game and at its end, as event payloads.

Every payload carries its breakdown so a client can animate it and an auditor can check it::

    {"feature": "city", "tiles": [[0, -1], [0, 0]], "pennants": 0, "multiplier": 2,
     "points": 4, "winners": [0], "followers_returned": [[0, 0, -1, "S", "normal"]],
     "final": false, "inn": false, "cathedral": false}

``points`` = ``multiplier`` x (tiles + pennants) for cities, ``multiplier`` x tiles for roads,
the number of listed tiles for monasteries (the monastery and its present neighbours), and
``multiplier`` (3) x the number of listed completed ``cities`` for fields.
"""

from __future__ import annotations

from typing import Any

from games.carcassonne.state import FollowerKind, Options
from games.carcassonne.tiles import CITY, FIELD, INNER_FIELD, MONASTERY, ROAD
from games.tileboard import Board, Feature, Follower, Placed, find_segment, follower_record, majority, segment_name

__all__ = [
    "INNER_FIELD",
    "completed_scorings",
    "final_scorings",
    "segment_at",
    "spot_name",
    "weight",
]

FARM_POINTS_PER_CITY = 3
_KIND_ORDER = {ROAD: 0, CITY: 1, MONASTERY: 2, FIELD: 3}


def weight(f: Follower) -> int:
    """Majority weight: the large follower counts as two."""
    return 2 if f.kind == FollowerKind.LARGE.value else 1


def spot_name(placed: Placed, segment: int) -> str:
    """The canonical ``at`` of a segment as the tile lies: its first middle port (N, E, S, W)
    if it has one, else its first port, else ``monastery`` / ``inner_field``."""
    return segment_name(placed, segment, middle_first=True)


segment_at = find_segment
"""The segment an ``at`` names on a placed tile, or None when the tile has no such spot."""


def _returned(board: Board, followers: tuple[Follower, ...]) -> list[list[Any]]:
    return sorted(follower_record(board, f, middle_first=True) for f in followers)


def _tiles(cells: Any) -> list[list[int]]:
    return [[x, y] for x, y in sorted(cells)]


def _payload(board: Board, feature: Feature, kind: str, cells: Any, pennants: int, multiplier: int,
             points: int, final: bool) -> dict[str, Any]:
    return {
        "feature": kind,
        "tiles": _tiles(cells),
        "pennants": pennants,
        "multiplier": multiplier,
        "points": points,
        "winners": list(majority(feature.followers, weight)),
        "followers_returned": _returned(board, feature.followers),
        "final": final,
        "inn": feature.count("inn") > 0,
        "cathedral": feature.count("cathedral") > 0,
    }


def score_road(board: Board, road: Feature, final: bool) -> dict[str, Any]:
    inn = road.count("inn") > 0
    if final:
        multiplier = 0 if inn else 1
    else:
        multiplier = 2 if inn else 1
    return _payload(board, road, ROAD, road.cells, 0, multiplier, multiplier * road.tile_count, final)


def score_city(board: Board, city: Feature, final: bool, options: Options) -> dict[str, Any]:
    cathedral = city.count("cathedral") > 0
    pennants = city.count("pennant")
    if final:
        multiplier = 0 if cathedral else 1
    elif cathedral:
        multiplier = 3
    elif city.tile_count == 2 and options.tiny_city_points == 2:
        multiplier = 1  # 1st edition: a completed two-tile city scores like an incomplete one
    else:
        multiplier = 2
    points = multiplier * (city.tile_count + pennants)
    return _payload(board, city, CITY, city.cells, pennants, multiplier, points, final)


def monastery_cells(board: Board, monastery: Feature) -> list[tuple[int, int]]:
    (x, y), = monastery.cells
    return [(x, y), *board.neighbours8(x, y)]


def score_monastery(board: Board, monastery: Feature, final: bool) -> dict[str, Any]:
    cells = monastery_cells(board, monastery)
    return _payload(board, monastery, MONASTERY, cells, 0, 1, len(cells), final)


def score_field(board: Board, field: Feature) -> dict[str, Any]:
    cities = [board.features[fid] for fid in board.touching_features(field)]
    done = sorted(_tiles(c.cells) for c in cities if c.kind == CITY and c.complete)
    payload = _payload(board, field, FIELD, field.cells, 0, FARM_POINTS_PER_CITY,
                       FARM_POINTS_PER_CITY * len(done), True)
    payload["cities"] = done
    return payload


def completed_scorings(board: Board, x: int, y: int, options: Options) -> list[tuple[Feature, dict[str, Any]]]:
    """Features completed by the tile at (x, y) that hold followers: its roads and cities, then
    monasteries on it or around it that now have all eight neighbours."""
    out = []
    for feature in board.features_on(x, y):
        if not feature.followers or not feature.complete:
            continue
        if feature.kind == ROAD:
            out.append((feature, score_road(board, feature, False)))
        elif feature.kind == CITY:
            out.append((feature, score_city(board, feature, False, options)))
    for cx, cy in [(x + dx, y + dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]:
        placed = board.cells.get((cx, cy))
        if placed is None:
            continue
        for i, seg in enumerate(placed.tile.segments):
            if seg.kind != MONASTERY:
                continue
            monastery = board.feature_of(cx, cy, i)
            if monastery.followers and len(board.neighbours8(cx, cy)) == 8:
                out.append((monastery, score_monastery(board, monastery, False)))
    return out


def final_scorings(board: Board, options: Options) -> list[tuple[Feature, dict[str, Any]]]:
    """Every feature still holding followers at the end, roads, cities, monasteries, fields,
    each group ordered by its smallest (x, y, segment)."""
    held = sorted(
        (f for f in board.all_features() if f.followers),
        key=lambda f: (_KIND_ORDER.get(f.kind, 9), min(f.segments)),
    )
    out = []
    for feature in held:
        if feature.kind == ROAD:
            out.append((feature, score_road(board, feature, True)))
        elif feature.kind == CITY:
            out.append((feature, score_city(board, feature, True, options)))
        elif feature.kind == MONASTERY:
            out.append((feature, score_monastery(board, feature, True)))
        elif feature.kind == FIELD:
            out.append((feature, score_field(board, feature)))
    return out
