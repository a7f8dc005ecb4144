"""A game package broken on purpose, for the registry's check (tests/games/test_registry.py): its
engine is the tiny test game's without ``decide``, as a game whose author forgot a hook."""

from __future__ import annotations

from typing import Any

from tests.tinygame import TinyEngine


class NoDecide(TinyEngine):
    name = "broken_game"

    def __getattribute__(self, attribute: str) -> Any:
        if attribute == "decide":
            raise AttributeError(attribute)
        return super().__getattribute__(attribute)


ENGINE = NoDecide()
