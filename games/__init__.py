"""Pure rules engines, one sub-package per game, and the registry that names them.

Nothing in ``games`` does I/O, reads a clock or uses asyncio; see :mod:`games.base` for the
contract each engine keeps. A game is one package exposing ``ENGINE``; adding one means writing
that package and naming it in :data:`GAME_MODULES`. The registry checks each engine when it loads
it (:func:`games.base.check_engine`): a game with a hook missing or of the wrong type is refused
then, with :class:`games.base.EngineRefused` naming the game and the hook.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from games.base import Engine, EngineRefused, check_engine

__all__ = ["GAME_MODULES", "default_engines", "find_engine", "load_engine"]

GAME_MODULES: Mapping[str, str] = {
    "carcassonne": "games.carcassonne",
    "castle": "games.castle",
    "castle_panic": "games.castle_panic",
}
"""Game id -> module exposing ``ENGINE``. The single list of games the service serves."""


def load_engine(name: str, module: str) -> Engine[Any]:
    """The ``ENGINE`` of package ``module`` as the engine of game id ``name``, checked against the
    :class:`~games.base.Engine` contract; :class:`~games.base.EngineRefused` when the package has
    no ``ENGINE`` or it breaks the contract."""
    engine = getattr(importlib.import_module(module), "ENGINE", None)
    if engine is None:
        raise EngineRefused(name, "ENGINE", f"is missing: package {module} must expose its engine as ENGINE")
    return check_engine(name, engine)


def find_engine(name: str) -> Engine[Any]:
    """The engine for game id ``name``; ``KeyError`` when there is none."""
    return load_engine(name, GAME_MODULES[name])


def default_engines() -> dict[str, Engine[Any]]:
    """Every game the service serves, by id. A game that fails to import or to keep the contract
    is a bug, not a game to skip quietly, so its error propagates."""
    return {name: find_engine(name) for name in GAME_MODULES}
