"""Carcassonne's board on the shared tile-board core: the placement hook and the start board.

The board is unbounded; facing sides must be of the same type, the kind of the side's middle
port (a city side faces a city side, a road a road, a field a field).
"""

from __future__ import annotations

from games.carcassonne.tiles import START_TILE, TileSet, tile_set
from games.tileboard import Board, BoardRules, SideKinds

__all__ = ["CarcassonneBoardRules", "board_rules", "start_board"]


class CarcassonneBoardRules(BoardRules):
    """Unbounded board; facing sides must have the same type (the middle port's kind)."""

    def side_key(self, kinds: SideKinds) -> str | None:
        return kinds[1]


_RULES: dict[int, CarcassonneBoardRules] = {
    id(tile_set(ic, junction)): CarcassonneBoardRules() for ic in (False, True) for junction in ("east", "east_west")
}
"""One rules instance (with its placement memo) per tile set, made once at import."""


def board_rules(tiles: TileSet) -> CarcassonneBoardRules:
    return _RULES[id(tiles)]


def start_board(tiles: TileSet) -> Board:
    return Board.empty(board_rules(tiles)).place(tiles.tiles[START_TILE], 0, 0, 0, check=False)
