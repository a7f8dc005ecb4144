"""An immutable board of placed tiles, with features joined across tiles and a placement frontier.

The board never knows a game's rules: a :class:`BoardRules` object supplies the facts (which
cells are playable, when two facing sides match, which facing kinds join). Every change returns
a new :class:`Board`; the old one stays valid.

A change is recorded, not applied: the new board *settles* (copies its features and frontier
from the nearest settled board once and applies the changes recorded since, in place) when one
of them is first read. A replay, which reads no feature between placements, thus copies the
maps and freezes each feature once per run of changes instead of once per placement; a query of
a few features (:meth:`Board.features_around`) leaves the settling unfrozen, and the next change
carries on from it. Settling is invisible: a board reads as the value its changes made, whenever
it is read, and never changes a board it started from.

Features are the connected components of segments: the new tile's segments are joined with the
facing segments of each neighbour when ``rules.joins(kind_a, kind_b)`` says so. A feature keeps
its segments, its cells (each counted once), the number of its ports facing an empty playable
cell (``open_ports``; zero means complete), the sums of its numeric segment attributes, and the
followers standing on it.

A placement touches a few features (one port fewer open, or a merge) and leaves the rest as they
are: a feature that only loses an open port keeps its segment and cell sets (they are frozen, so
sharing them is safe), and merged sets are built once, when the settling freezes.

An installed donjon runs this module compiled to C by mypyc (``setup.py``), from this very
source: a fold of The Castle, which settles on every placement, runs ~30 % faster so. This file
therefore keeps to what mypyc compiles: its classes are native except where marked
(``mypyc_attr``), compiled code checks the annotations at run time, and a new board is made
through ``__init__``. Editable installs run it as plain Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from games.tileboard.features import Draft, Feature, Follower, Placed
from games.tileboard.fit import OPPOSITE, WALL, BoardRules, Cell, Constraint, IllegalPlacement, SegRef
from games.tileboard.settling import CLEAR, CLEAR_AT, FOLLOWER, MAX_PENDING, PLACE, Change, Settling
from games.tileboard.tiles import ROTATIONS, SIDE_OFFSETS, Segment, Tile

__all__ = [
    "WALL",
    "Board",
    "BoardRules",
    "Feature",
    "Follower",
    "IllegalPlacement",
    "Placed",
]


class Board:
    """Placed tiles, features and the frontier: an immutable value. Treat every field as read-only.

    ``frontier`` maps each empty playable cell that touches a placed tile along an edge to its
    constraint: per side ``N E S W`` the key of the facing placed side, :data:`WALL`, or
    ``None`` (empty playable neighbour).

    A change (:meth:`place`, :meth:`with_follower`, :meth:`without_followers`,
    :meth:`without_followers_at`) makes its new ``cells`` at once and only records the rest: the
    board *settles*, bringing its features and frontier up to date, when one of them is first
    read (or once :data:`MAX_PENDING` changes wait). A replay reads no feature between
    placements, so it copies the feature maps and freezes each changed feature once per run of
    changes instead of on every placement. Settling changes
    nothing a caller can see: every board, settled or not, reads as the value its changes made,
    and settling never touches the board it started from.
    """

    __slots__ = ("_changes", "_features", "_frontier", "_next_id", "_parent", "_seg_feature", "_settled", "_work",
                 "cells", "rules")

    rules: BoardRules
    cells: dict[Cell, Placed]

    def __init__(
        self,
        rules: BoardRules,
        cells: dict[Cell, Placed] | None = None,
        seg_feature: dict[SegRef, int] | None = None,
        features: dict[int, Feature] | None = None,
        frontier: dict[Cell, Constraint] | None = None,
        next_id: int = 0,
    ) -> None:
        """A settled board from its fields (every change makes its boards itself)."""
        self.rules = rules
        self.cells = {} if cells is None else cells
        self._seg_feature = {} if seg_feature is None else seg_feature
        self._features = {} if features is None else features
        self._frontier = {} if frontier is None else frontier
        self._next_id = next_id
        self._settled: Board | None = None
        """Unsettled: the nearest settled board it comes from (``None``: this one is settled)."""
        self._changes: tuple[Change, ...] = ()
        """Unsettled: the changes recorded since ``_settled``, oldest first."""
        self._parent: Board | None = None
        """The nearest board this one was made from that held a settling (to take over) then."""
        self._work: Settling | None = None

    @classmethod
    def empty(cls, rules: BoardRules) -> Board:
        return cls(rules)

    def _changed(self, change: Change, cells: dict[Cell, Placed]) -> Board:
        """A new board: this one with ``change`` recorded (settled when first read). It holds
        the nearest settled board and the changes since, not the boards in between, so those
        are freed as a fold goes."""
        board = Board(self.rules, cells)
        board._settled = self if self._settled is None else self._settled
        board._changes = self._changes + (change,)
        board._parent = self if self._work is not None else self._parent
        board._work = None
        if len(board._changes) >= MAX_PENDING:
            board._settle()
        return board

    def _settling(self) -> Settling:
        """This board's features and frontier brought up to date, not frozen: the changes since
        the settled board applied on copies of its maps, or on the settling of the board this
        one was made from (:meth:`_reader`), which gives it up (that board still reads as its
        own value: read again, it settles again from the settled board)."""
        parent, self._parent = self._parent, None
        work = parent._work if parent is not None else None
        if work is not None:
            parent._work = None  # type: ignore[union-attr]
        else:
            settled = self._settled
            assert settled is not None
            work = Settling(settled.rules, settled.cells, settled._seg_feature, settled._features, settled._frontier,
                            settled._next_id)
        for change in self._changes[work.applied :]:
            work.apply(change)
        return work

    def _settle(self) -> None:
        """Bring the features and frontier up to date and freeze them into this board."""
        work = self._work if self._work is not None else self._settling()
        self._seg_feature, self._features, self._frontier, self._next_id = work.freeze()
        self._settled = self._parent = self._work = None
        self._changes = ()

    def _reader(self) -> tuple[dict[SegRef, int], Mapping[int, Feature | Draft], Callable[[int], Feature]]:
        """(segment -> feature id, feature id -> feature or draft, feature id -> feature) for a
        query of a few features: drafts may be read but never leave the board. A board with
        changes pending keeps its settling unfrozen for them, so that the next change carries
        on from it instead of copying the maps again: a follower step that asks which features
        the placed tile completed (The Castle) settles nothing in a replay."""
        if self._settled is None:
            return self._seg_feature, self._features, self._features.__getitem__
        if self._work is None:
            self._work = self._settling()
        return self._work.seg_feature, self._work.features, self._work.frozen

    @property
    def seg_feature(self) -> dict[SegRef, int]:
        """The feature id of every segment on the board."""
        if self._settled is not None:
            self._settle()
        return self._seg_feature

    @property
    def features(self) -> dict[int, Feature]:
        """Every feature by id, in the order they were made (merged ones gone)."""
        if self._settled is not None:
            self._settle()
        return self._features

    @property
    def frontier(self) -> dict[Cell, Constraint]:
        if self._settled is not None:
            self._settle()
        return self._frontier

    @property
    def next_id(self) -> int:
        if self._settled is not None:
            self._settle()
        return self._next_id

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return (self.cells, self.seg_feature, self.features, self.frontier, self.next_id) == (
            other.cells, other.seg_feature, other.features, other.frontier, other.next_id)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Board({len(self.cells)} tiles, {len(self.features)} features, {len(self.frontier)} frontier cells)"

    # --- queries ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.cells)

    def __contains__(self, cell: object) -> bool:
        return cell in self.cells

    def at(self, x: int, y: int) -> Placed | None:
        return self.cells.get((x, y))

    def feature_of(self, x: int, y: int, segment: int) -> Feature:
        seg_feature, _, frozen = self._reader()
        return frozen(seg_feature[(x, y, segment)])

    def features_on(self, x: int, y: int) -> list[Feature]:
        """The distinct features having a segment on the tile at (x, y), by segment order."""
        placed = self.cells[(x, y)]
        seg_feature, _, frozen = self._reader()
        seen: dict[int, Feature] = {}
        for i in range(len(placed.tile.segments)):
            fid = seg_feature[(x, y, i)]
            if fid not in seen:
                seen[fid] = frozen(fid)
        return list(seen.values())

    def features_around(self, x: int, y: int, *, complete: bool = False) -> list[tuple[SegRef, Feature]]:
        """Every distinct feature a tile at (x, y) belongs to or borders: those with a segment on
        it (segment order), then those with a port facing it across an edge (sides N E S W),
        each once, with the first segment found. A tile closes a bordering feature of another
        kind without joining it (The Castle's buildings), so completion checks need both; with
        ``complete=True`` only the complete ones are listed."""
        cells, edges, side_ids = self.cells, self.rules.edges, self.rules.side_ids
        placed = cells[(x, y)]
        tile = placed.tile
        my_sides = side_ids[tile][placed.rotation // 90]
        refs = [(x, y, i) for i in range(len(tile.segments))]
        for side in range(4):
            dx, dy = SIDE_OFFSETS[side]
            other = cells.get((x + dx, y + dy))
            if other is not None:
                ox, oy = other.x, other.y
                their_sides = side_ids[other.tile][other.rotation // 90]
                for theirs, _ports in edges[(my_sides[side], their_sides[OPPOSITE[side]])][0]:
                    refs.append((ox, oy, theirs))
        seg_feature, features, frozen = self._reader()
        out: list[tuple[SegRef, Feature]] = []
        seen: set[int] = set()
        for ref in refs:
            fid = seg_feature[ref]
            if fid not in seen:
                seen.add(fid)
                if not complete or features[fid].open_ports == 0:
                    out.append((ref, frozen(fid)))
        return out

    def segment(self, ref: SegRef) -> Segment:
        x, y, i = ref
        return self.cells[(x, y)].tile.segments[i]

    def all_features(self) -> Iterator[Feature]:
        return iter(self.features.values())

    def followers(self) -> Iterator[Follower]:
        for f in self.features.values():
            yield from f.followers

    def open_ports(self, feature: Feature) -> list[tuple[int, int, int]]:
        """(x, y, board port) of every port of ``feature`` facing an empty playable cell."""
        out = []
        playable = self.rules.is_playable
        for x, y, i in sorted(feature.segments):
            for p in self.cells[(x, y)].segment_ports(i):
                nx, ny = x + SIDE_OFFSETS[p // 3][0], y + SIDE_OFFSETS[p // 3][1]
                if (nx, ny) not in self.cells and playable(nx, ny):
                    out.append((x, y, p))
        return out

    def touching_features(self, feature: Feature) -> set[int]:
        """Ids of features that a segment of ``feature`` touches on its own tile (``Segment.touches``)."""
        out = set()
        for x, y, i in feature.segments:
            for j in self.cells[(x, y)].tile.segments[i].touches:
                out.add(self.seg_feature[(x, y, j)])
        return out

    def neighbours8(self, x: int, y: int) -> list[Cell]:
        """Occupied cells among the eight around (x, y)."""
        return [
            (x + dx, y + dy)
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
            if (dx or dy) and (x + dx, y + dy) in self.cells
        ]

    def free_segments(self, x: int, y: int) -> list[int]:
        """Segments of the tile at (x, y) whose feature holds no follower (follower spots)."""
        placed = self.cells[(x, y)]
        seg_feature, features = self.seg_feature, self.features
        return [
            i for i in range(len(placed.tile.segments)) if not features[seg_feature[(x, y, i)]].followers
        ]

    # --- placement legality -----------------------------------------------------------------

    def legal_placements(self, tile: Tile, *, distinct: bool = False) -> list[tuple[int, int, int]]:
        """Every (x, y, rotation) where ``tile`` may go.

        All four rotations of a symmetric tile are listed (each is a valid command); with
        ``distinct=True`` only the smallest rotation of each distinct orientation is kept.
        """
        table = self.rules.fits_table(tile)
        fit = self.rules._fit
        out = []
        canon = tile.canonical_turn
        for (x, y), constraint in self.frontier.items():
            turns = table.get(constraint)
            if turns is None:
                turns = fit(tile, constraint)
            for q in turns:
                if not distinct or canon[q] == q:
                    out.append((x, y, q * 90))
        return out

    def can_place(self, tile: Tile) -> bool:
        """Does ``tile`` fit anywhere?"""
        table = self.rules.fits_table(tile)
        fit = self.rules._fit
        for constraint in self.frontier.values():
            turns = table.get(constraint)
            if turns is None:
                turns = fit(tile, constraint)
            if turns:
                return True
        return False

    def is_legal(self, tile: Tile, x: int, y: int, rotation: int) -> bool:
        """Membership check for one placement (same code path as :meth:`legal_placements`)."""
        constraint = self.frontier.get((x, y))
        if constraint is None or rotation not in ROTATIONS:
            return False
        return rotation // 90 in self.rules.fits(tile, constraint)

    # --- changes ----------------------------------------------------------------------------

    def place(self, tile: Tile, x: int, y: int, rotation: int, *, check: bool = True, fixed: bool = False) -> Board:
        """A new board with ``tile`` at (x, y). ``check=False`` skips legality (start tiles,
        border pieces); raises :class:`IllegalPlacement` when checked and refused."""
        if rotation not in ROTATIONS:
            raise IllegalPlacement(f"rotation {rotation!r} is not one of {ROTATIONS}")
        if (x, y) in self.cells:
            raise IllegalPlacement(f"({x}, {y}) is already occupied")
        if check and not self.is_legal(tile, x, y, rotation):
            raise IllegalPlacement(f"{tile.id} rotated {rotation} does not fit at ({x}, {y})")
        placed = Placed(tile, x, y, rotation, fixed)
        cells = dict(self.cells)
        cells[(x, y)] = placed
        return self._changed((PLACE, placed), cells)

    def with_follower(self, follower: Follower) -> Board:
        """A new board with ``follower`` added to its segment's feature (no occupancy check)."""
        return self._changed((FOLLOWER, follower), self.cells)

    def without_followers(self, feature_ids: Iterable[int]) -> Board:
        """A new board where the given features (ids of this board's) hold no followers."""
        return self._changed((CLEAR, tuple(feature_ids)), self.cells)

    def without_followers_at(self, segments: Iterable[SegRef]) -> Board:
        """A new board where the features of the given segments ``(x, y, segment)`` hold no
        followers: :meth:`without_followers` for a caller that knows where the followers stand
        (a scoring event), which need not settle this board to find their features."""
        return self._changed((CLEAR_AT, tuple(segments)), self.cells)
