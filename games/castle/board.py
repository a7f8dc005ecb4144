"""The castle's board on the shared tile-board core: the interior, the wall and start spaces.

The core (:mod:`games.tileboard`) does the tiles, the feature union and the frontier; The Castle
only supplies its hooks:

* a tile may go only on an interior space (``is_playable``); every other cell is wall, so a port
  facing it is closed (paths may end at the wall, buildings against it are closed);
* the start spaces printed on the wall are fixed pieces placed at setup in wall cells, so a tile
  touching one along an edge is connected, a path ending on one is closed, and the start space
  counts as a tile of the path (and its printed market belongs to its court);
* only paths must match (a side's key is which of its three ports are paths), any other kinds may
  face each other, and facing segments join only when they are of the same kind.

A segment of a placed tile is named, as clients name it, by a board port of it (``"N"``,
``"Es"``...) or, when it has no port, by its ``name`` (a closed chapel: ``"chapel"``). The
canonical name is its first port in ``Nw..Wn`` order: the core's
:func:`games.tileboard.segment_name` and :func:`games.tileboard.find_segment` as they are.
"""

from __future__ import annotations

from collections.abc import Hashable

from games.castle.data import BoardShape
from games.tileboard import Board, BoardRules, SideKinds

__all__ = ["CastleRules", "initial_board"]


class CastleRules(BoardRules):
    """The Castle's placement hooks for one interior outline."""

    def __init__(self, shape: BoardShape) -> None:
        super().__init__()
        self.shape = shape
        self.interior = shape.interior

    def is_playable(self, x: int, y: int) -> bool:
        return (x, y) in self.interior

    def side_key(self, kinds: SideKinds) -> Hashable:
        # Only paths must continue across an edge; everything else may face anything.
        return (kinds[0] == "path", kinds[1] == "path", kinds[2] == "path")


def initial_board(rules: CastleRules) -> Board:
    """An empty castle: only the start spaces of the wall are on the board."""
    board = Board.empty(rules)
    for start in rules.shape.start_spaces:
        board = board.place(start.tile, start.x, start.y, 0, check=False, fixed=True)
    return board
