"""Carcassonne values: options, phases, turns and the game state folded from events."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from games.base import OptionSpec, fill_options
from games.carcassonne.tiles import TileSet, tile_set
from games.records import Record, copyable, fast_init
from games.tileboard import Board

__all__ = [
    "FollowerKind",
    "LARGE_FOLLOWERS",
    "NORMAL_FOLLOWERS",
    "OPTIONS",
    "SECRET_OPTIONS",
    "Options",
    "Phase",
    "State",
    "Turn",
    "options_from",
]

OPTIONS: Mapping[str, OptionSpec] = {
    "inns_cathedrals": OptionSpec("bool", False, "Inns & Cathedrals: 18 more tiles, inns, cathedrals, "
                                  "one large follower each, up to 6 players.", label="Inns & Cathedrals"),
    "farmers": OptionSpec("bool", True, "Followers may be placed on fields; fields score 3 per adjacent "
                          "completed city at the end.", label="Farmers"),
    "tiny_city_points": OptionSpec("choice", 4, "Points per completed 2-tile city without pennants: 4 (2nd "
                                   "edition) or 2 (1st edition: 1 per tile and pennant).", (4, 2),
                                   label="Points for a tiny city"),
    "junction_inn": OptionSpec("choice", "east", "Which legs of the I&C junction tile IC-C its inn belongs to "
                               "(open question Q1): 'east' (recommended) or 'east_west'.", ("east", "east_west"),
                               label="Inn of the junction tile"),
    "tile_order": OptionSpec("list", None, "Tile ids drawn in this order after the start tile (tutorials, "
                             "puzzles, games played at a table); the game ends when the list is used up. "
                             "Secret: never shown to players or spectators.", items="tile ids", label="Tile order"),
}
"""The option table (the catalog shows it)."""

SECRET_OPTIONS = frozenset({"tile_order"})

NORMAL_FOLLOWERS = 7
"""Meeples a player may place (the eighth is the score marker)."""
LARGE_FOLLOWERS = 1
"""The Inns & Cathedrals large meeple, one per player."""


class Phase(str, Enum):
    """Where the game stands; the value is what views show."""

    NOT_STARTED = "not_started"
    """No event yet."""
    PLACE_TILE = "place_tile"
    """``current`` must place ``tile``."""
    PLACE_FOLLOWER = "place_follower"
    """``current`` may place a follower on the tile just placed, or pass."""
    SCORING = "scoring"
    """Between the follower step and the next draw; only seen inside one command's events."""
    OVER = "over"
    """Final scoring done."""


class FollowerKind(str, Enum):
    NORMAL = "normal"
    """A meeple; weight 1 in majorities."""
    LARGE = "large"
    """The Inns & Cathedrals large meeple; weight 2 in majorities, never double points."""


@dataclass(frozen=True, slots=True)
class Options:
    """Normalized game options (see ``CarcassonneEngine.options`` for their descriptions)."""

    inns_cathedrals: bool = False
    farmers: bool = True
    tiny_city_points: int = 4
    junction_inn: str = "east"
    tile_order: tuple[str, ...] | None = None

    @property
    def tiles(self) -> TileSet:
        return tile_set(self.inns_cathedrals, self.junction_inn)

    def as_dict(self, *, with_order: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "inns_cathedrals": self.inns_cathedrals,
            "farmers": self.farmers,
            "tiny_city_points": self.tiny_city_points,
            "junction_inn": self.junction_inn,
        }
        if with_order:
            out["tile_order"] = None if self.tile_order is None else list(self.tile_order)
        return out


def options_from(filled: Mapping[str, Any]) -> Options:
    """:class:`Options` from option values as the engine normalises them or as ``game_started``
    records them (missing ones take their defaults)."""
    o = fill_options("carcassonne", OPTIONS, filled)
    order = None if o["tile_order"] is None else tuple(o["tile_order"])
    return Options(o["inns_cathedrals"], o["farmers"], o["tiny_city_points"], o["junction_inn"], order)


@fast_init
@dataclass(frozen=True, slots=True)
class Turn:
    """One completed turn, kept for audit and the from-scratch recount."""

    seat: int
    tile: str
    x: int
    y: int
    rotation: int
    at: str | None = None
    kind: str | None = None


@copyable
@dataclass(frozen=True)
class State(Record):
    """Everything the rules need. ``pile`` counts the remaining tiles per id of
    ``options.tiles.ids``; with ``tile_order`` the remaining list is ``order`` instead.

    Without slots, on purpose: every event copies it, and a copy given one merged ``__dict__``
    (:func:`games.records.copyable`) costs about half of setting 14 slots."""

    phase: Phase = Phase.NOT_STARTED
    options: Options = Options()
    seats: int = 0
    board: Board | None = None
    current: int = 0
    tile: str | None = None
    pile: tuple[int, ...] = ()
    order: tuple[str, ...] | None = None
    placed: tuple[int, int] | None = None
    supply: tuple[tuple[int, int], ...] = ()
    scores: tuple[int, ...] = ()
    turns: tuple[Turn, ...] = ()
    discarded: tuple[str, ...] = ()
    winners: tuple[int, ...] = ()

    @property
    def remaining(self) -> int:
        """Tiles still in the draw pile (the tile to place is not counted)."""
        return len(self.order) if self.order is not None else sum(self.pile)

    @property
    def table(self) -> Board:
        """The board of a started game (typed for the rules: ``board`` is ``None`` only before)."""
        assert self.board is not None
        return self.board

    @property
    def placed_at(self) -> tuple[int, int]:
        """The cell of the tile placed this turn (only asked for after ``tile_placed``)."""
        assert self.placed is not None
        return self.placed

    @property
    def tile_to_place(self) -> str:
        assert self.tile is not None
        return self.tile

    def remaining_by_tile(self) -> dict[str, int]:
        """Per-id counts of the pile: public knowledge at a real table, never the order."""
        ids = self.options.tiles.ids
        if self.order is not None:
            counts = dict.fromkeys(ids, 0)
            for tid in self.order:
                counts[tid] += 1
            return {tid: n for tid, n in counts.items() if n}
        return {tid: n for tid, n in zip(ids, self.pile) if n}
