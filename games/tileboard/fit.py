"""What a board knows of a game's rules (:class:`BoardRules`: playable cells, which facing sides
match, which kinds join) and the fits of each tile it derives from them once, memoised.

Compiled by mypyc with :mod:`games.tileboard.board` (see there): kept to what mypyc compiles."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from mypy_extensions import mypyc_attr

from games.tileboard.tiles import SIDE_OFFSETS, SideKinds, Tile

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

SIDE_MASKS = tuple(0b111 << 3 * side for side in range(4))
"""The port bits of each side (see ``Tile.port_masks``)."""
OPPOSITE = (2, 3, 0, 1)


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
