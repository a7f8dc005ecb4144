"""Pure rules engines, one sub-package per game, and the registry that names them.

Nothing in ``games`` does I/O, reads a clock or uses asyncio; see :mod:`games.base` for the
contract each engine keeps.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from games.base import Engine

__all__ = ["GAME_MODULES", "default_engines", "find_engine"]

GAME_MODULES: Mapping[str, str] = {
    "carcassonne": "games.carcassonne",
    "castle": "games.castle",
    "castle_panic": "games.castle_panic",
}
"""Game id -> module exposing ``ENGINE``. The single list of games the service serves."""


def find_engine(name: str) -> Engine:
    """The engine for game id ``name``; ``KeyError`` when there is none."""
    module = importlib.import_module(GAME_MODULES[name])
    engine: Engine = module.ENGINE
    return engine


def default_engines() -> dict[str, Engine]:
    """Every game the service serves, by id. A game that fails to import is a bug, not a game
    to skip quietly, so its error propagates."""
    return {name: find_engine(name) for name in GAME_MODULES}
