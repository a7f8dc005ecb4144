"""The bench game: one seat, one command (``roll``), never over.

To measure the service rather than a game's rules, the service figures (:mod:`bench.service`,
:mod:`bench.workers`, :mod:`bench.cluster`) send their commands to :data:`BENCH`, whose only
command draws a die roll from the service's rng (a random outcome written into the event, like
the real games) and which never ends. It is served by the bench alone, never by the catalog.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import Event, OptionSpec, Rng, command

__all__ = ["BENCH", "BenchEngine", "ROLL"]


class BenchEngine:
    """One seat, one command (``roll``), never over: the service's cost with a trivial game."""

    name = "bench"
    title = "Service benchmark (a die rolled forever)"
    min_seats = 1
    max_seats = 1
    options: Mapping[str, OptionSpec] = {}
    secret_options: frozenset[str] = frozenset()

    def catalog_entry(self) -> dict[str, Any]:
        return {"id": self.name, "title": self.title, "min_seats": 1, "max_seats": 1, "options": {}}

    def normalize_options(self, options: Mapping[str, Any], seats: int) -> dict[str, Any]:
        return {}

    def initial_state(self) -> tuple[int, int]:
        return (0, 0)

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        return [Event("opened", {})]

    def evolve(self, state: tuple[int, int], event: Event) -> tuple[int, int]:
        if event.type == "rolled":
            return (state[0] + 1, state[1] + event.payload["value"])
        return state

    def decide(self, state: tuple[int, int], seat: int, cmd: dict[str, Any], rng: Rng) -> list[Event]:
        return [Event("rolled", {"value": rng.stream("die", state[0]).randint(1, 6)})]

    def legal_moves(self, state: tuple[int, int], seat: int | None) -> list[dict[str, Any]]:
        return [command("roll")] if seat == 0 else []

    def waiting_for(self, state: tuple[int, int]) -> list[int]:
        return [0]

    def view(self, state: tuple[int, int], viewer: int | None) -> dict[str, Any]:
        return {"rolls": state[0], "total": state[1], "legal": self.legal_moves(state, viewer)}

    def redact(self, event: Event, viewer: int | None) -> Event:
        return event

    def is_terminal(self, state: tuple[int, int]) -> bool:
        return False

    def reveals(self, state: tuple[int, int], event: Event) -> bool:
        return event.type == "rolled"  # a die roll is random: nothing to undo across it

    def clock_seat(self, state: tuple[int, int]) -> int | None:
        return 0

    def timeout_answer(self, state: tuple[int, int], seat: int) -> dict[str, Any] | None:
        return None

    def cooperative(self, options: Mapping[str, Any]) -> bool:
        return False

    def summary(self, state: tuple[int, int]) -> dict[str, Any]:
        return {"status": "active", "rolls": state[0]}


BENCH = BenchEngine()
ROLL = {"type": "command", "command": {"type": "roll", "args": {}}}
