"""The Castle's game state: frozen values that ``evolve`` replaces, never mutates."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from games.castle.track import Marker
from games.records import Record, copyable, fast_init
from games.tileboard import Board

__all__ = ["CastleState", "FeatureRef", "HeldWallTile", "Keep", "Options", "Phase", "SeatState", "with_seat"]

Cell = tuple[int, int]
FeatureRef = tuple[int, int, str]
"""A feature completed this turn as events name it: ``(x, y, at)``, a port (or a port-less
segment's name) of one of its segments on the tile at (x, y). That tile is the one just placed
unless the feature only borders it (a house closed by a court tile)."""


class Phase(StrEnum):
    """Where a game stands; the active seat owes the command the phase names."""

    NOT_STARTED = "not_started"
    """Before ``game_started``."""
    PLACE_TILE = "place_tile"
    """The active seat places the drawn tile (``place_tile``)."""
    PLACE_FOLLOWER = "place_follower"
    """The active seat may put a follower on the tile just placed (``place_follower`` / ``pass``)."""
    SCORE = "score"
    """Several completed features (or a doubling wall tile) leave the active seat a choice."""
    END_TURN = "end_turn"
    """The active seat may use an extra-turn wall tile (``use_wall_tile``) or ``end_turn``."""
    OVER = "over"
    """Final scoring done."""


@dataclass(frozen=True, slots=True)
class Options:
    """Normalized game options (see the engine's option specs)."""

    falcon: bool = False
    ties: str = "nobody"
    halt_at_gates: bool = False
    tile_order: tuple[str, ...] | None = None
    """Castle tiles to draw, in this order, instead of random draws (tutorials, puzzles,
    re-entering a game played at a table); the game ends when the list is used up."""

    @property
    def ties_score(self) -> bool:
        return self.ties == "both"

    def as_dict(self) -> dict[str, Any]:
        return {
            "falcon": self.falcon,
            "ties": self.ties,
            "halt_at_gates": self.halt_at_gates,
            "tile_order": None if self.tile_order is None else list(self.tile_order),
        }


@fast_init
@dataclass(frozen=True, slots=True)
class HeldWallTile:
    """A face-up wall tile in front of a player; usable from the turn after ``taken_turn``."""

    kind: str
    taken_turn: int


@fast_init
@dataclass(frozen=True, slots=True)
class Keep:
    """Where a player's keep stands: the largest house that player has scored."""

    size: int
    cells: tuple[Cell, ...]


@copyable
@dataclass(frozen=True, slots=True)
class SeatState(Record):
    marker: Marker = Marker()  # noqa: RUF009 - a frozen value: one shared default is safe
    followers: int = 6
    """Normal followers in the supply (the seventh is the scoring marker)."""
    prince: bool = False
    """The prince (king) is in the supply (Falcon)."""
    falconer: bool = False
    wall_tiles: tuple[HeldWallTile, ...] = ()
    keep: Keep | None = None
    aeries: int = 0


@copyable
@dataclass(frozen=True)
class CastleState(Record):
    """The whole game. Frozen but without slots, on purpose: every event copies it, and
    giving the copy one merged ``__dict__`` (:func:`games.records.copyable`) costs less than
    half of setting its 21 slots (and a ninth of ``dataclasses.replace``)."""

    phase: Phase = Phase.NOT_STARTED
    options: Options = Options()
    dataset: str = ""
    board: Board | None = field(default=None, compare=False)
    seats: tuple[SeatState, ...] = ()
    active: int = 0
    turn: int = 0
    tile: str | None = None
    """The tile the active seat must place (drawn, public)."""
    placed: Cell | None = None
    """Cell of the tile placed this turn."""
    stack: tuple[tuple[str, int], ...] = ()
    """Remaining castle tiles as (id, count), never an order: the next one is drawn when needed."""
    remaining: int = 0
    """How many castle tiles are left to draw (the sum of ``stack``)."""
    set_aside: tuple[str, ...] = ()
    towers: tuple[bool, ...] = ()
    """Per corner tower: still holds its face-down wall tile."""
    wall_pool: tuple[tuple[str, int], ...] = ()
    """Wall tiles not yet taken, as (kind, count); a tower's tile is drawn from it on landing."""
    aerie_supply: int = 0
    completed: tuple[FeatureRef, ...] = ()
    """Features the placed tile completed this turn (its own and those it closed), scored or to score."""
    scored: tuple[FeatureRef, ...] = ()
    doubled: tuple[FeatureRef, ...] = ()
    """Completed features the active seat doubles with a wall tile."""
    extra_turns: int = 0
    final: tuple[dict[str, Any], ...] = ()
    winners: tuple[int, ...] = ()

    @property
    def pending(self) -> tuple[FeatureRef, ...]:
        return tuple(at for at in self.completed if at not in self.scored)


def with_seat(state: CastleState, seat: int, **changes: Any) -> CastleState:
    seats = list(state.seats)
    seats[seat] = seats[seat].but(**changes)
    return state.but(seats=tuple(seats))
