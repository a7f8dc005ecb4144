"""What stands on a board: a placed tile (:class:`Placed`), a follower, a feature (the connected
segments of several tiles), and the changeable draft of a feature while a board settles.

Compiled by mypyc with :mod:`games.tileboard.board` (see there): kept to what mypyc compiles."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from games.records import fast_init
from games.tileboard.fit import Cell, SegRef
from games.tileboard.tiles import Tile


@fast_init
@dataclass(frozen=True, slots=True)
class Placed:
    """A tile on the board. ``fixed`` marks pieces a game put there at setup (border pieces)."""

    tile: Tile
    x: int
    y: int
    rotation: int
    fixed: bool = False

    @property
    def turns(self) -> int:
        return self.rotation // 90

    @property
    def ports(self) -> tuple[int | None, ...]:
        """Segment index at each board port."""
        return self.tile.rotated[self.rotation // 90]

    def segment_ports(self, segment: int) -> tuple[int, ...]:
        """Board ports of ``segment`` as the tile lies."""
        return self.tile.segment_ports[self.rotation // 90][segment]


@fast_init
@dataclass(frozen=True, slots=True)
class Follower:
    """A figure on a segment. ``kind`` is the game's word ("normal", "large", ...)."""

    owner: int
    kind: str
    x: int
    y: int
    segment: int


@fast_init
@dataclass(frozen=True, slots=True)
class Feature:
    """A connected component of joined segments across the board."""

    id: int
    kind: str
    segments: frozenset[SegRef]
    cells: frozenset[Cell]
    open_ports: int
    attrs: dict[str, int]
    followers: tuple[Follower, ...] = ()

    @property
    def complete(self) -> bool:
        """No port of the feature faces an empty playable cell."""
        return self.open_ports == 0

    @property
    def tile_count(self) -> int:
        return len(self.cells)

    def count(self, attr: str) -> int:
        """Sum of a numeric segment attribute over the feature (bools count 1)."""
        return self.attrs.get(attr, 0)


def _summed(mine: dict[str, int], theirs: dict[str, int]) -> dict[str, int]:
    """A new dict of the two features' attribute sums (``mine`` may be a frozen feature's)."""
    attrs = dict(mine)
    for k, v in theirs.items():
        attrs[k] = attrs.get(k, 0) + v
    return attrs


class Draft:
    """A feature of the board being changed while it settles (mutable; it never leaves
    :class:`Settling`).

    It shares the frozen sets of the feature it starts from and only lists the parts merged into
    it; :meth:`freeze` builds each merged set once, however many placements merged into it."""

    __slots__ = ("attrs", "cells", "followers", "id", "kind", "old", "open_ports", "segments", "size")

    def __init__(self, old: Feature) -> None:
        self.old = old
        self.id = old.id
        self.kind = old.kind
        self.size = len(old.segments)
        self.segments: list[Iterable[SegRef]] = [old.segments]
        self.cells: list[Iterable[Cell]] = [old.cells]
        self.open_ports = old.open_ports
        self.attrs = old.attrs
        self.followers = old.followers

    def take(self, segment: SegRef, cells: tuple[Cell, ...], open_ports: int, attrs: dict[str, int]) -> None:
        """Take in one segment of the tile being placed (what :meth:`absorb` does with a draft
        of that segment alone, without making one)."""
        self.size += 1
        self.segments.append((segment,))
        self.cells.append(cells)
        self.open_ports += open_ports
        if attrs:
            self.attrs = _summed(self.attrs, attrs)

    def absorb(self, other: Draft) -> None:
        """Take ``other`` into this feature (the caller relabels ``other``'s segments)."""
        self.size += other.size
        self.segments += other.segments
        self.cells += other.cells
        self.open_ports += other.open_ports
        if other.attrs:
            self.attrs = _summed(self.attrs, other.attrs)
        self.followers += other.followers

    def freeze(self) -> Feature:
        old = self.old
        if len(self.segments) == 1:  # absorbed nothing: its sets are the old ones
            if self.open_ports == old.open_ports and self.followers is old.followers:
                return old
            return Feature(old.id, old.kind, old.segments, old.cells, self.open_ports, old.attrs, self.followers)
        segments = frozenset().union(*self.segments)
        cells = frozenset().union(*self.cells)
        return Feature(self.id, self.kind, segments, cells, self.open_ports, self.attrs, self.followers)
