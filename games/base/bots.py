"""The bot contract: a named, pure player of one game."""

from __future__ import annotations

from typing import Any, Protocol

from games.base.rng import Rng
from games.base.values import Command

__all__ = ["Bot"]


class Bot(Protocol):
    """A named player of one game that the service can seat (see the module docstring).

    ``choose`` is pure: it reads ``state`` and draws only from ``rng``, never mutates either
    state or bot, and keeps nothing between calls, so the same state, seat and rng state give the
    same command (``donjon replay`` re-runs it to check every recorded bot move). It is called only
    for a seat that owes a command, and returns one of ``legal_moves(state, seat)`` as it is.
    """

    @property
    def name(self) -> str:
        """The bot's name in the catalog and in ``POST /games`` ``bots`` (``"greedy"``); read-only,
        so that a frozen bot (a dataclass) is a bot too."""
        ...

    def choose(self, state: Any, seat: int, rng: Rng) -> Command:
        """The command ``seat`` plays now: one of the engine's ``legal_moves(state, seat)``."""
        ...
