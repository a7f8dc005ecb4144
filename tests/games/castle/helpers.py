"""A scripted Castle game for scenario tests: tiles drawn in a given order, commands by seat."""

from __future__ import annotations

from typing import Any

from games.base import Event, command, fold
from games.castle import ENGINE
from games.castle.state import CastleState
from service.fairness.draw_schemes import LegacyRandom


class Game:
    """Plays commands through ``decide`` and folds the events, keeping the whole log."""

    def __init__(self, tiles: list[str], seed: int = 7, engine=ENGINE, **options: Any) -> None:
        self.engine = engine
        self.rng = LegacyRandom(seed)
        self.events: list[Event] = engine.setup({"tile_order": tiles, **options}, 2, self.rng)
        self.state: CastleState = fold(engine, self.events)

    def do(self, type_: str, seat: int | None = None, **args: Any) -> list[Event]:
        seat = self.state.active if seat is None else seat
        events = self.engine.decide(self.state, seat, command(type_, **args), self.rng)
        self.inject(*events)
        return events

    def place(self, x: int, y: int, rotation: int = 0) -> list[Event]:
        return self.do("place_tile", x=x, y=y, rotation=rotation)

    def follower(self, at: str, kind: str = "normal") -> list[Event]:
        return self.do("place_follower", at=at, kind=kind)

    def turn(self, x: int, y: int, rotation: int = 0, at: str | None = None, kind: str = "normal") -> list[Event]:
        """Place the drawn tile, then a follower at ``at`` or pass."""
        events = self.place(x, y, rotation)
        events += self.follower(at, kind) if at else self.do("pass")
        return events

    def inject(self, *events: Event) -> None:
        """Fold events into the game as if they had happened (positions as literals)."""
        self.events.extend(events)
        for event in events:
            self.state = self.engine.evolve(self.state, event)

    def legal(self, seat: int | None = None) -> list[dict]:
        return self.engine.legal_moves(self.state, self.state.active if seat is None else seat)

    @property
    def scores(self) -> list[int]:
        return [s.marker.score for s in self.state.seats]

    def of(self, type_: str, events: list[Event] | None = None) -> list[dict]:
        return [e.payload for e in (self.events if events is None else events) if e.type == type_]


def give_wall_tile(game: Game, seat: int, tile: str, tower: int = 13) -> None:
    """Put a face-up wall tile in front of ``seat`` as if taken from ``tower`` now."""
    game.inject(Event("wall_tile_taken", {"seat": seat, "tower": tower, "tile": tile}))


def set_score(game: Game, seat: int, score: int) -> None:
    game.inject(Event("marker_moved", {"seat": seat, "points": 0, "from": 0, "to": score, "gate": None, "lost": 0}))
