"""The Castle's dataset as values: tiles, boards (interior and start spaces), the scoring track with
its towers and gates, the wall-tile kinds, and the loaded :class:`Dataset` (see :mod:`games.castle.data`
for the file format)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from games.tileboard import Segment, Tile

SCHEMA = 1
"""The dataset schema this engine reads."""

Cell = tuple[int, int]


class Kind(StrEnum):
    """Feature kinds of The Castle (original names; the Polish names are labels, see rules)."""

    PATH = "path"
    """Path (Zamek: road); herald."""
    HOUSE = "house"
    """House; squire."""
    TOWER = "tower"
    """Tower (Zamek: pigsty); knight."""
    COURT = "court"
    """Court (Zamek: meadow); merchant; scored only at the end, by markets."""
    CHAPEL = "chapel"
    """Chapel (Falcon only); preacher."""


class WallEffect(StrEnum):
    """What a wall tile does; the dataset maps each wall-tile kind to one effect."""

    EXTRA_TURN = "extra_turn"
    """Used at the end of one's own turn: play one more turn."""
    DOUBLE = "double"
    """Double one's points for one completed feature of the tile's ``feature`` kind."""
    INCOMPLETE = "incomplete"
    """At the end, score one of one's incomplete features of the tile's ``feature`` kind."""
    MARKET_VALUE = "market_value"
    """At the end, markets of one court one controls are worth ``points`` each instead of 3."""
    KEEP_VALUE = "keep_value"
    """At the end, one's keep counts ``points`` more in the keep comparison."""
    FLAT_POINTS = "flat_points"
    """At the end, ``points`` points."""


EXPECTED: Mapping[str, Any] = {
    "base_tiles": 60,
    "falcon_tiles": 18,
    "interior": 76,
    "start_spaces": 7,
    "gate_start_spaces": 2,
    "towers": 14,
    "token_towers": 13,
    "track_length": 100,
    "gates": ((27, 28), (47, 48), (69, 70), (91, 92)),
    "wall_tile_kinds": 9,
    "wall_tile_copies": 2,
    "followers_in_supply": 6,
    "aerie_tokens": 12,
}
"""Facts stated by the rulebooks; a dataset that contradicts one of them is refused."""


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem of a dataset: which entry, which field, what is wrong."""

    where: str
    field: str
    problem: str

    def __str__(self) -> str:
        return f"{self.where}: {self.field}: {self.problem}" if self.field else f"{self.where}: {self.problem}"


class DatasetError(ValueError):
    """A dataset that cannot be used; ``issues`` lists every problem found."""

    def __init__(self, issues: list[Issue], name: str = "dataset") -> None:
        self.issues = tuple(issues)
        lines = "\n".join(f"  - {issue}" for issue in self.issues)
        super().__init__(f"{name} has {len(self.issues)} problem(s):\n{lines}")


@dataclass(frozen=True, slots=True)
class StartSpace:
    """A start space printed on the wall: a fixed piece outside the interior, against it."""

    id: str
    x: int
    y: int
    tile: Tile
    gate: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class BoardShape:
    """The playable interior and the start spaces of one wall (base, or with the Falcon gates)."""

    name: str
    interior: frozenset[Cell]
    start_spaces: tuple[StartSpace, ...]


@dataclass(frozen=True, slots=True)
class Tower:
    """A corner tower covering two consecutive track spaces; ``token``: holds a wall tile."""

    index: int
    spaces: tuple[int, int]
    token: bool


@dataclass(frozen=True, slots=True)
class TrackDef:
    """The scoring track on top of the wall."""

    length: int
    towers: tuple[Tower, ...]
    gates: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class WallTileKind:
    """One kind of wall tile: its effect, parameters and its number in both editions."""

    name: str
    effect: WallEffect
    feature: Kind | None
    points: int | None
    original: int
    polish: int


@dataclass(frozen=True, slots=True, eq=False)
class Dataset:
    """A loaded, valid dataset. Treat every field as read-only."""

    name: str
    title: str
    provisional: tuple[tuple[str, str], ...]
    tiles: tuple[Tile, ...]
    counts: Mapping[str, int]
    falcon_tiles: tuple[Tile, ...]
    boards: Mapping[str, BoardShape]
    track: TrackDef
    wall_tiles: tuple[WallTileKind, ...]
    wall_tile_copies: int
    followers_in_supply: int
    aerie_tokens: int
    source: Mapping[str, Any]
    by_id: Mapping[str, Tile]

    def tile(self, tile_id: str) -> Tile:
        return self.by_id[tile_id]

    def wall_tile(self, name: str) -> WallTileKind:
        for kind in self.wall_tiles:
            if kind.name == name:
                return kind
        raise KeyError(name)


def _segment(spec: Mapping[str, Any]) -> Segment:
    attrs: list[tuple[str, Any]] = []
    for key in ("fountain", "markets", "aeries", "end", "name"):
        if spec.get(key):
            attrs.append((key, spec[key]))
    return Segment(spec["kind"], tuple(attrs))


def build_tile(tile_id: str, entry: Mapping[str, Any], expansion: str) -> Tile:
    segments = {tok: _segment(spec) for tok, spec in entry["segments"].items()}
    return Tile.from_tokens(tile_id, entry["ports"], segments, wall="-", extra=(("expansion", expansion),))
