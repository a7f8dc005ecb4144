"""What the rules read of one loaded :class:`~games.castle.data.Dataset`, derived from it once:
the boards with their placement memo, the start boards, the walls with and without the gates, the
wall-tile kinds, the piles as they are dealt and each board's outline as the views draw it.

Every rules module (:mod:`~games.castle.scoring`, :mod:`~games.castle.evolve`,
:mod:`~games.castle.legal`, :mod:`~games.castle.rules`, :mod:`~games.castle.views`) takes these
tables first; the engine (:class:`games.castle.engine.CastleEngine`) is one, so that the modules
import one way (data and state, tables, scoring, evolve, legal, rules, views, engine) and none of
them imports the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.castle.board import CastleRules, initial_board
from games.castle.data import BoardShape, Dataset, WallTileKind
from games.castle.state import CastleState
from games.castle.track import Wall
from games.draw import canonical
from games.tileboard import Board, Tile

__all__ = ["CastleTables"]


class CastleTables:
    """The Castle's facts over one :class:`Dataset` (game id :attr:`name`)."""

    name = "castle"
    secret_options = frozenset({"tile_order"})
    """The options no view and no redacted event may show (the engine's, read by the views)."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._rules = {key: CastleRules(shape) for key, shape in dataset.boards.items()}
        self._start = {key: initial_board(rules) for key, rules in self._rules.items()}
        self._outlines = {key: _outline(shape) for key, shape in dataset.boards.items()}
        self._walls = {flag: Wall.from_track(dataset.track, with_gates=flag) for flag in (False, True)}
        self.wall_tile_kinds: Mapping[str, WallTileKind] = {k.name: k for k in dataset.wall_tiles}
        self._piles = {
            flag: canonical((t.id, dataset.counts[t.id]) for t in self.tile_set(flag)) for flag in (False, True)
        }
        self.wall_tiles: tuple[str, ...] = canonical((k.name, dataset.wall_tile_copies) for k in dataset.wall_tiles)
        """The wall tiles as they are dealt (``donjon-draw-2``): every copy, kinds sorted."""

    def tile_set(self, falcon: bool) -> tuple[Tile, ...]:
        return self.dataset.tiles + (self.dataset.falcon_tiles if falcon else ())

    def pile(self, falcon: bool) -> tuple[str, ...]:
        """The castle tiles as they are dealt (``donjon-draw-2``): every copy of :meth:`tile_set`, ids sorted."""
        return self._piles[falcon]

    def board_rules(self, falcon: bool) -> CastleRules:
        return self._rules["falcon" if falcon else "base"]

    def start_board(self, falcon: bool) -> Board:
        return self._start["falcon" if falcon else "base"]

    def outline(self, falcon: bool) -> Outline:
        """The board's interior as rows of ``#`` (a tile space) and ``.``, and its start spaces:
        the same in every view of a game, so drawn once."""
        return self._outlines["falcon" if falcon else "base"]

    def wall(self, state: CastleState) -> Wall:
        return self._walls[state.options.falcon]

    def wall_tile_kind(self, name: str) -> WallTileKind:
        return self.wall_tile_kinds[name]

    def wall_tile_info(self, kind: str) -> dict[str, Any]:
        k = self.wall_tile_kinds[kind]
        info: dict[str, Any] = {"tile": k.name, "effect": k.effect.value, "original": k.original, "polish": k.polish}
        if k.feature is not None:
            info["feature"] = k.feature.value
        if k.points is not None:
            info["points"] = k.points
        return info


Outline = tuple[tuple[str, ...], tuple[Mapping[str, Any], ...]]
"""(interior rows, start spaces): :meth:`CastleTables.outline`."""


def _outline(shape: BoardShape) -> Outline:
    cells = shape.interior
    width = max(x for x, _ in cells) + 1
    height = max(y for _, y in cells) + 1
    rows = tuple("".join("#" if (x, y) in cells else "." for x in range(width)) for y in range(height))
    starts = tuple({"id": s.id, "x": s.x, "y": s.y, "gate": s.gate} for s in shape.start_spaces)
    return rows, starts
