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

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mypy_extensions import mypyc_attr

from games.records import fast_init
from games.tileboard.tiles import ROTATIONS, SIDE_OFFSETS, Segment, SideKinds, Tile

__all__ = [
    "WALL",
    "Board",
    "BoardRules",
    "Feature",
    "Follower",
    "IllegalPlacement",
    "Placed",
]

Cell = tuple[int, int]
SegRef = tuple[int, int, int]
"""(x, y, segment index on the tile placed at (x, y))."""
Constraint = tuple[Hashable, ...]
"""A frontier cell's constraint, one entry per side: ``None`` (empty), :data:`WALL` or the key of
the placed side facing it."""
SideSegments = tuple[tuple[int, str] | None, ...]
"""The three ports of one side of a placed tile, clockwise: (segment index, kind) or ``None``."""
Edge = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]
"""What a shared edge joins, for the tile on one side of it: ((their segment, ports facing
mine), ...) and ((my segment, their segment) that join, ...), both in port order."""


class _Wall:
    """The constraint of a side facing an unplayable empty cell (a wall, the board's edge)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "WALL"


WALL: Any = _Wall()

_SIDE_MASKS = tuple(0b111 << 3 * side for side in range(4))
"""The port bits of each side (see ``Tile.port_masks``)."""
_OPPOSITE = (2, 3, 0, 1)


class IllegalPlacement(ValueError):
    """``Board.place`` was asked for a placement the rules refuse."""


@mypyc_attr(native_class=False)  # a dict subclass: compiled, it stays a Python class
class _Memo(dict[Any, Any]):
    """A pure function's values, each computed by ``of(key)`` on its first lookup and
    remembered: a placement asks a dict, not a method, about each cell and kind around it."""

    __slots__ = ("of",)

    def __init__(self, of: Callable[[Any], Any]) -> None:
        super().__init__()
        self.of = of

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.of(key)
        return value


@mypyc_attr(allow_interpreted_subclasses=True)  # each game subclasses it
class BoardRules:
    """The hooks a game gives the board. Subclass and override; the defaults suit Carcassonne
    except :meth:`side_key`, which by default compares whole sides port by port.

    Results of :meth:`fits` and :meth:`is_playable` are memoised per instance: they depend only
    on the tile design and the constraint, or the cell, so one instance may serve every board of
    a game.
    """

    def __init__(self) -> None:
        self._side_keys: dict[str, tuple[tuple[Hashable, ...], ...]] = {}
        self._facing_keys: dict[str, tuple[tuple[Hashable, ...], ...]] = {}
        self._fits: dict[str, dict[Constraint, tuple[int, ...]]] = {}
        self.playable: Mapping[Cell, bool] = _Memo(lambda cell: self.is_playable(*cell))
        """``is_playable`` by cell, memoised (read it, never write it)."""
        self.blank_constraint: Mapping[Cell, Constraint] = _Memo(self._blank_constraint)
        """The constraint of an empty cell with no placed neighbour: ``None`` on each side
        facing a playable cell, :data:`WALL` on the others (memoised)."""
        self.side_ids: Mapping[Tile, tuple[tuple[int, ...], ...]] = _Memo(self._side_ids)
        """``side_ids[tile][q][s]``: side ``s`` of ``tile`` turned ``q`` quarter turns, as an id
        of its :data:`SideSegments` (tiles share the ids of equal sides: a game's tiles have a
        few dozen distinct sides, so :attr:`edges` stays small)."""
        self._sides: dict[SideSegments, int] = {}
        self._side_list: list[SideSegments] = []
        self.edges: Mapping[tuple[int, int], Edge] = _Memo(self._edge)
        """``edges[(mine, theirs)]``: what the edge between two sides (their ``side_ids``)
        joins (:data:`Edge`), memoised."""

    # --- hooks ------------------------------------------------------------------------------

    def is_playable(self, x: int, y: int) -> bool:
        """May a tile ever be placed at (x, y)? A port facing an unplayable empty cell is closed."""
        return True

    def side_key(self, kinds: SideKinds) -> Hashable:
        """Reduce one side (three port kinds, aligned to the side being matched) to a key."""
        return kinds

    def sides_match(self, mine: Hashable, theirs: Hashable) -> bool:
        """May a side with key ``mine`` face a placed side with key ``theirs``?"""
        return mine == theirs

    def wall_ok(self, mine: Hashable) -> bool:
        """May a side with key ``mine`` face an unplayable empty cell?"""
        return True

    def joins(self, mine: str, theirs: str) -> bool:
        """Do two facing segments of these kinds become one feature?"""
        return mine == theirs

    # --- derived, memoised ------------------------------------------------------------------

    def own_keys(self, tile: Tile) -> tuple[tuple[Hashable, ...], ...]:
        """``own_keys(tile)[q][s]``: key of side ``s`` of ``tile`` turned ``q`` quarter turns."""
        keys = self._side_keys.get(tile.id)
        if keys is None:
            keys = tuple(tuple(self.side_key(k) for k in sides) for sides in tile.side_kinds)
            self._side_keys[tile.id] = keys
        return keys

    def facing_keys(self, tile: Tile) -> tuple[tuple[Hashable, ...], ...]:
        """Key of each side as the neighbour across it sees it (ports reversed to align)."""
        keys = self._facing_keys.get(tile.id)
        if keys is None:
            keys = tuple(tuple(self.side_key((k[2], k[1], k[0])) for k in sides) for sides in tile.side_kinds)
            self._facing_keys[tile.id] = keys
        return keys

    def fits(self, tile: Tile, constraint: Constraint) -> tuple[int, ...]:
        """Quarter turns of ``tile`` that satisfy a frontier cell's constraint."""
        turns = self.fits_table(tile).get(constraint)
        if turns is None:
            turns = self._fit(tile, constraint)
        return turns

    def fits_table(self, tile: Tile) -> dict[Constraint, tuple[int, ...]]:
        """The memo of :meth:`fits` for one tile (read it, never write it)."""
        table = self._fits.get(tile.id)
        if table is None:
            table = self._fits[tile.id] = {}
        return table

    def _blank_constraint(self, cell: Cell) -> Constraint:
        x, y = cell
        return tuple([None if self.playable[(x + dx, y + dy)] else WALL for dx, dy in SIDE_OFFSETS])

    def _side_ids(self, tile: Tile) -> tuple[tuple[int, ...], ...]:
        segments = tile.segments
        ids = []
        for ports in tile.rotated:
            per_side = []
            for side in range(4):
                key = tuple(None if (i := ports[p]) is None else (i, segments[i].kind)
                            for p in range(3 * side, 3 * side + 3))
                if key not in self._sides:
                    self._sides[key] = len(self._side_list)
                    self._side_list.append(key)
                per_side.append(self._sides[key])
            ids.append(tuple(per_side))
        return tuple(ids)

    def _edge(self, key: tuple[int, int]) -> Edge:
        """The edge between two facing sides: port ``k`` of mine (clockwise) faces port ``2 - k``
        of theirs."""
        mine, theirs = self._side_list[key[0]], self._side_list[key[1]]
        facing: dict[int, int] = {}
        joined: list[tuple[int, int]] = []
        for k in range(3):
            their_port = theirs[2 - k]
            if their_port is None:
                continue
            their_segment, their_kind = their_port
            facing[their_segment] = facing.get(their_segment, 0) + 1
            my_port = mine[k]
            if my_port is not None and self.joins(my_port[1], their_kind):
                joined.append((my_port[0], their_segment))
        return tuple(facing.items()), tuple(joined)

    def _fit(self, tile: Tile, constraint: Constraint) -> tuple[int, ...]:
        own = self.own_keys(tile)
        turns = tuple(q for q in range(4) if self._turn_fits(own[q], constraint))
        self.fits_table(tile)[constraint] = turns
        return turns

    def _turn_fits(self, sides: tuple[Hashable, ...], constraint: Constraint) -> bool:
        for mine, theirs in zip(sides, constraint):
            if theirs is None:
                continue
            if theirs is WALL:
                if not self.wall_ok(mine):
                    return False
            elif not self.sides_match(mine, theirs):
                return False
        return True


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


class _Draft:
    """A feature of the board being changed while it settles (mutable; it never leaves
    :class:`_Settling`).

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

    def absorb(self, other: _Draft) -> None:
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


Change = tuple[Any, ...]
"""One recorded change of a board: ``(_PLACE, placed)``, ``(_FOLLOWER, follower)``,
``(_CLEAR, feature ids)`` or ``(_CLEAR_AT, segment refs)``."""
_PLACE, _FOLLOWER, _CLEAR, _CLEAR_AT = range(4)

_MAX_PENDING = 64
"""A board settles once this many changes wait on it, so that the settled board it holds on to
is never far behind."""


class _Settling:
    """The features and frontier of a settled board, copied once and changed in place by a run of
    recorded changes, then frozen into a settled board's fields (see :class:`Board`)."""

    def __init__(self, board: Board) -> None:
        self.rules = board.rules
        self.seg_feature = dict(board._seg_feature)
        self.features: dict[int, Feature | _Draft] = dict(board._features)
        self.frontier = dict(board._frontier)
        self.next_id = board._next_id
        self.drafted: list[_Draft] = []
        self.settled_cells = board.cells
        self.placed: dict[Cell, Placed] = {}
        """The tiles placed by the changes applied so far (``settled_cells`` has the others)."""
        self.applied = 0
        """How many changes since the settled board have been applied."""

    def draft(self, fid: int) -> _Draft:
        """The feature ``fid``, made changeable (once per settling)."""
        feature = self.features[fid]
        if type(feature) is _Draft:
            return feature
        d = self.features[fid] = _Draft(feature)  # type: ignore[arg-type]
        self.drafted.append(d)
        return d

    def frozen(self, fid: int) -> Feature:
        """The feature ``fid`` as it stands, frozen (a later change drafts it again)."""
        feature = self.features[fid]
        if type(feature) is _Draft:
            feature = self.features[fid] = feature.freeze()
        return feature  # type: ignore[return-value]

    def apply(self, change: Change) -> None:
        """Apply the next recorded change."""
        self.applied += 1
        kind = change[0]
        if kind == _PLACE:
            self.place(change[1])
        elif kind == _FOLLOWER:
            follower = change[1]
            d = self.draft(self.seg_feature[(follower.x, follower.y, follower.segment)])
            d.followers = (*d.followers, follower)
        else:
            fids = change[1] if kind == _CLEAR else [self.seg_feature[ref] for ref in change[1]]
            for fid in fids:
                if self.features[fid].followers:
                    self.draft(fid).followers = ()

    def place(self, placed: Placed) -> None:
        """Join the new tile's segments to its neighbours' features and move the frontier."""
        tile, x, y = placed.tile, placed.x, placed.y
        q = placed.rotation // 90
        settled_cells, placed_here = self.settled_cells, self.placed
        rules = self.rules
        playable, edges, side_ids = rules.playable, rules.edges, rules.side_ids
        my_sides = side_ids[tile][q]
        seg_feature, features = self.seg_feature, self.features

        # Each segment starts as a feature of its own (new ids, in segment order); the joins below
        # merge some of them into the neighbours' features, and only the others are added, at the
        # end of ``features``.
        first = self.next_id
        masks, sums, segments = tile.port_masks[q], tile.sums, tile.segments
        for i in range(len(segments)):
            seg_feature[(x, y, i)] = first + i
        self.next_id = first + len(segments)

        # Walk each side once: an empty playable neighbour makes this side's ports open; across a
        # shared edge, the neighbours' features and their ports facing this cell are counted, and
        # facing segments that join are noted for the merge below.
        open_sides: list[int] = []
        open_mask = 0
        facing_ports: dict[int, int] = {}
        joined: list[tuple[SegRef, SegRef]] = []
        for side in range(4):
            dx, dy = SIDE_OFFSETS[side]
            n = (x + dx, y + dy)
            other = settled_cells.get(n) or placed_here.get(n)  # the tile there, as of this change
            if other is None:
                if playable[n]:
                    open_sides.append(side)
                    open_mask |= _SIDE_MASKS[side]
                continue
            their_facing, joins = edges[(my_sides[side], side_ids[other.tile][other.rotation // 90][_OPPOSITE[side]])]
            ox, oy = other.x, other.y
            for theirs, count in their_facing:
                fid = seg_feature[(ox, oy, theirs)]
                facing_ports[fid] = facing_ports.get(fid, 0) + count
            for mine, theirs in joins:
                joined.append(((x, y, mine), (ox, oy, theirs)))

        # Every feature facing the tile changes (its ports facing a playable cell close, or it
        # merges): each is drafted once, here, and the merges below only meet these drafts.
        draft, here_playable = self.draft, playable[(x, y)]
        drafts: dict[int, _Draft] = {}
        for fid, count in facing_ports.items():
            d = drafts[fid] = draft(fid)
            if here_playable:
                d.open_ports -= count
        here = ((x, y),)
        joined_here: set[int] = set()
        for mine_ref, their_ref in joined:
            fid = seg_feature[mine_ref]
            b = drafts[seg_feature[their_ref]]
            if fid >= first:
                # A segment of this tile joining for the first time goes into the neighbour's
                # feature: being the smallest and newest, it never keeps its id.
                i = fid - first
                b.take(mine_ref, here, (masks[i] & open_mask).bit_count(), sums[i])
                seg_feature[mine_ref] = b.id
                joined_here.add(fid)
                continue
            a = drafts[fid]  # a segment of this tile already in a facing feature
            if a is b:
                continue
            # Keep the bigger feature's id (then the older one) and relabel the smaller.
            if (a.size, -a.id) < (b.size, -b.id):
                a, b = b, a
            aid = a.id
            for part in b.segments:
                for ref in part:
                    seg_feature[ref] = aid
            a.absorb(b)
            del features[b.id]

        cell = frozenset(here)
        for i, segment in enumerate(segments):  # this tile's segments that joined nothing, in order
            if first + i not in joined_here:
                features[first + i] = Feature(first + i, segment.kind, frozenset(((x, y, i),)), cell,
                                              (masks[i] & open_mask).bit_count(), sums[i])

        # The empty playable cells beside the new tile: a cell already in the frontier changes
        # only on the side facing the new tile; a new one touches no other tile (else it would
        # be in the frontier), so its other sides are empty or walls.
        frontier = self.frontier
        frontier.pop((x, y), None)
        facing = rules.facing_keys(tile)[q]
        blank = rules.blank_constraint
        for side in open_sides:
            dx, dy = SIDE_OFFSETS[side]
            n = (x + dx, y + dy)
            constraint = list(frontier.get(n) or blank[n])
            constraint[_OPPOSITE[side]] = facing[side]
            frontier[n] = tuple(constraint)
        placed_here[(x, y)] = placed

    def freeze(self) -> tuple[dict[SegRef, int], dict[int, Feature], dict[Cell, Constraint], int]:
        """The settled fields; each feature changed by the run becomes a :class:`Feature` once."""
        features = self.features
        for d in self.drafted:
            if features.get(d.id) is d:
                features[d.id] = d.freeze()
        return self.seg_feature, features, self.frontier, self.next_id  # type: ignore[return-value]


class Board:
    """Placed tiles, features and the frontier: an immutable value. Treat every field as read-only.

    ``frontier`` maps each empty playable cell that touches a placed tile along an edge to its
    constraint: per side ``N E S W`` the key of the facing placed side, :data:`WALL`, or
    ``None`` (empty playable neighbour).

    A change (:meth:`place`, :meth:`with_follower`, :meth:`without_followers`,
    :meth:`without_followers_at`) makes its new ``cells`` at once and only records the rest: the
    board *settles*, bringing its features and frontier up to date, when one of them is first
    read (or once :data:`_MAX_PENDING` changes wait). A replay reads no feature between
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
        self._work: _Settling | None = None

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
        if len(board._changes) >= _MAX_PENDING:
            board._settle()
        return board

    def _settling(self) -> _Settling:
        """This board's features and frontier brought up to date, not frozen: the changes since
        the settled board applied on copies of its maps, or on the settling of the board this
        one was made from (:meth:`_reader`), which gives it up (that board still reads as its
        own value: read again, it settles again from the settled board)."""
        parent, self._parent = self._parent, None
        work = parent._work if parent is not None else None
        if work is not None:
            parent._work = None  # type: ignore[union-attr]
        else:
            assert self._settled is not None
            work = _Settling(self._settled)
        for change in self._changes[work.applied :]:
            work.apply(change)
        return work

    def _settle(self) -> None:
        """Bring the features and frontier up to date and freeze them into this board."""
        work = self._work if self._work is not None else self._settling()
        self._seg_feature, self._features, self._frontier, self._next_id = work.freeze()
        self._settled = self._parent = self._work = None
        self._changes = ()

    def _reader(self) -> tuple[dict[SegRef, int], Mapping[int, Feature | _Draft], Callable[[int], Feature]]:
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
                for theirs, _ports in edges[(my_sides[side], their_sides[_OPPOSITE[side]])][0]:
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
        return self._changed((_PLACE, placed), cells)

    def with_follower(self, follower: Follower) -> Board:
        """A new board with ``follower`` added to its segment's feature (no occupancy check)."""
        return self._changed((_FOLLOWER, follower), self.cells)

    def without_followers(self, feature_ids: Iterable[int]) -> Board:
        """A new board where the given features (ids of this board's) hold no followers."""
        return self._changed((_CLEAR, tuple(feature_ids)), self.cells)

    def without_followers_at(self, segments: Iterable[SegRef]) -> Board:
        """A new board where the features of the given segments ``(x, y, segment)`` hold no
        followers: :meth:`without_followers` for a caller that knows where the followers stand
        (a scoring event), which need not settle this board to find their features."""
        return self._changed((_CLEAR_AT, tuple(segments)), self.cells)
