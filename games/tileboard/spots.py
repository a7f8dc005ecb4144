"""Naming the segments of a placed tile as clients do, and the follower step built on it.

A client names a segment of a tile on the board by any board port of it (``"N"``, ``"Es"``...)
or, when it has no port, by its ``name`` attribute (``Segment("chapel", (("name", "chapel"),))``).
The canonical name an engine writes into events is the segment's first port in ``Nw..Wn`` order,
or with ``middle_first`` its first middle port (``N E S W``) when it has one (Carcassonne's
habit: a city cap is "N", not "Nw").

A follower placed or returned is recorded in events as ``[owner, x, y, at, kind]``
(:func:`follower_record`); :func:`feature_at` finds the feature such a record names.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from games.tileboard.board import Board, Feature, Follower, Placed
from games.tileboard.tiles import MIDDLE_PORTS, PORT_INDEX, PORT_NAMES

__all__ = ["Spot", "feature_at", "find_segment", "follower_record", "free_spots", "segment_name"]


def segment_name(placed: Placed, segment: int, *, middle_first: bool = False) -> str:
    """The canonical client name of ``segment`` of a placed tile (see the module docstring)."""
    ports = placed.segment_ports(segment)
    if ports:
        if middle_first:
            for port in ports:
                if port in MIDDLE_PORTS:
                    return PORT_NAMES[port]
        return PORT_NAMES[ports[0]]
    return str(placed.tile.segments[segment].attr("name", f"segment{segment}"))


def find_segment(placed: Placed, at: str) -> int | None:
    """The segment ``at`` names on a placed tile (any of its board ports, or the name of a
    port-less segment); ``None`` when the tile has no such spot (or the port is a wall)."""
    port = PORT_INDEX.get(at)
    if port is not None:
        return placed.ports[port]
    for i, seg in enumerate(placed.tile.segments):
        if seg.attr("name") == at and not placed.segment_ports(i):
            return i
    return None


def feature_at(board: Board, x: int, y: int, at: str) -> Feature | None:
    """The feature of the segment ``at`` names on the tile at (x, y), or ``None``."""
    segment = find_segment(board.cells[(x, y)], at)
    return None if segment is None else board.feature_of(x, y, segment)


class Spot(NamedTuple):
    """A place for a follower on a placed tile: its canonical name, segment and feature.
    (A named tuple: listed for every follower step, and cheaper to make than a dataclass.)"""

    at: str
    segment: int
    feature: Feature


def free_spots(
    board: Board, x: int, y: int, *, middle_first: bool = False, one_per_feature: bool = False
) -> list[Spot]:
    """Follower spots of the tile at (x, y): its segments whose feature holds no follower, in
    segment order. With ``one_per_feature`` a feature that several segments of the tile share
    (a road looping back onto its own tile) is listed once, at its first segment."""
    placed = board.cells[(x, y)]
    features, seg_feature = board.features, board.seg_feature
    out = []
    seen: set[int] = set()
    for segment in range(len(placed.tile.segments)):
        feature = features[seg_feature[(x, y, segment)]]
        if feature.followers:
            continue
        if one_per_feature:
            if feature.id in seen:
                continue
            seen.add(feature.id)
        out.append(Spot(segment_name(placed, segment, middle_first=middle_first), segment, feature))
    return out


def follower_record(board: Board, follower: Follower, *, middle_first: bool = False) -> list[Any]:
    """``[owner, x, y, at, kind]``: a follower as events record it (JSON-safe)."""
    placed = board.cells[(follower.x, follower.y)]
    at = segment_name(placed, follower.segment, middle_first=middle_first)
    return [follower.owner, follower.x, follower.y, at, follower.kind]
