"""Test helpers: run scripted and random Carcassonne games through the public engine surface."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from games.base import Event, Rng, fold
from games.carcassonne import ENGINE
from games.carcassonne.state import State
from service.fairness.draw_schemes import LegacyRandom

Step = tuple[str, int, tuple[int, int], "str | None"]
"""(tile id, rotation, (x, y), follower) where follower is None, "S", "large:E", "monastery",
"inner_field": one turn of a scripted game; seats alternate from seat 0."""


@dataclass
class Game:
    state: State
    events: list[Event] = field(default_factory=list)

    def scored(self) -> list[dict[str, Any]]:
        return [e.payload for e in self.events if e.type == "feature_scored"]


def new_game(seats: int = 2, seed: int = 0, **options: Any) -> Game:
    events = ENGINE.setup(options, seats, LegacyRandom(seed))
    return Game(fold(ENGINE, events), list(events))


def send(game: Game, seat: int, cmd: dict[str, Any], seed: int = 0) -> list[Event]:
    events = ENGINE.decide(game.state, seat, cmd, LegacyRandom(seed))
    for e in events:
        game.state = ENGINE.evolve(game.state, e)
    game.events.extend(events)
    return events


def follower_cmd(spec: str | None) -> dict[str, Any]:
    if spec is None:
        return {"type": "pass", "args": {}}
    kind, _, at = spec.rpartition(":")
    return {"type": "place_follower", "args": {"at": at, "kind": kind or "normal"}}


def play_script(steps: list[Step], seats: int = 2, **options: Any) -> Game:
    """Play ``steps`` with ``tile_order`` set to exactly their tiles, so the game ends after them."""
    game = new_game(seats, tile_order=[s[0] for s in steps], **options)
    for i, (tile, rotation, (x, y), follower) in enumerate(steps):
        seat = i % seats
        assert game.state.current == seat and game.state.tile == tile, (i, game.state.current, game.state.tile)
        send(game, seat, {"type": "place_tile", "args": {"x": x, "y": y, "rotation": rotation}})
        send(game, seat, follower_cmd(follower))
    assert ENGINE.is_terminal(game.state)
    return game


Bot = Callable[[State, int, Rng], dict[str, Any]]


def play_random(seats: int, seed: int, bot: Bot, *, observe: Callable[[Game, list[Event]], None] | None = None,
                **options: Any) -> Game:
    """A complete bot game; the same rng feeds setup, the bot and every decide."""
    rng = LegacyRandom(seed)
    events = ENGINE.setup(options, seats, rng)
    game = Game(fold(ENGINE, events), list(events))
    if observe:
        observe(game, events)
    while not ENGINE.is_terminal(game.state):
        seat = game.state.current
        cmd = bot(game.state, seat, rng)
        new = ENGINE.decide(game.state, seat, cmd, rng)
        for e in new:
            game.state = ENGINE.evolve(game.state, e)
        game.events.extend(new)
        if observe:
            observe(game, new)
    return game
