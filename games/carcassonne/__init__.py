"""Carcassonne (2nd edition base game with farmers) and the Inns & Cathedrals expansion.

``ENGINE`` implements :class:`games.base.Engine`; see :mod:`games.carcassonne.engine` for the
commands and events, :mod:`games.carcassonne.tiles` for the tile data, and
``docs/games/carcassonne.md`` for options, views and the readings of open rule questions.
"""

from games.carcassonne.engine import ENGINE, CarcassonneEngine
from games.carcassonne.recount import recount

__all__ = ["ENGINE", "CarcassonneEngine", "recount"]
