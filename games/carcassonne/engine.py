"""The Carcassonne engine: a small class, :class:`CarcassonneEngine`, that is the
:class:`games.base.Engine` of :class:`~games.carcassonne.state.State`.

Carcassonne (base game C2 with farmers, optional Inns & Cathedrals). The class holds the catalog
and the options; its hooks are the rules modules' functions themselves, so no method forwards to
another. The modules import one way: :mod:`~games.carcassonne.tiles` (the tile data),
:mod:`~games.carcassonne.board` (placement hook, start board), :mod:`~games.carcassonne.state`
(state and options), :mod:`~games.carcassonne.scoring` (points), :mod:`~games.carcassonne.evolve`
(the events), :mod:`~games.carcassonne.legal` (legal moves), :mod:`~games.carcassonne.rules`
(setup, ``decide``, the commands), :mod:`~games.carcassonne.views` (views, redaction, summary),
this module, then :mod:`~games.carcassonne.bots`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import EngineBase, Event, OptionSpec, Rng
from games.carcassonne import legal, rules, views
from games.carcassonne.assets import assets as tile_assets
from games.carcassonne.board import CarcassonneBoardRules, board_rules, start_board
from games.carcassonne.evolve import evolve
from games.carcassonne.state import OPTIONS, SECRET_OPTIONS, Options, Phase, State, options_from
from games.carcassonne.tiles import tile_set
from games.tileboard import check_draw_order

__all__ = ["ENGINE", "OPTIONS", "CarcassonneBoardRules", "CarcassonneEngine", "board_rules", "start_board"]

Command = dict[str, Any]


class CarcassonneEngine(EngineBase[State]):
    """Implements :class:`games.base.Engine` for Carcassonne."""

    name = "carcassonne"
    title = "Carcassonne"
    min_seats = 2
    max_seats = 6
    options: Mapping[str, OptionSpec] = OPTIONS
    secret_options = SECRET_OPTIONS
    revealing = frozenset({"game_started", "tile_drawn", "tile_discarded"})
    """A draw shows the next tile (and the tiles set aside before it): no undo across it."""
    notes = ("2-5 players; 6 only with inns_cathedrals.",)

    # --- catalog and options ----------------------------------------------------------------

    def seat_range(self, options: Mapping[str, Any]) -> tuple[int, int]:
        return 2, 6 if options["inns_cathedrals"] else 5

    def check_options(self, options: dict[str, Any], seats: int) -> dict[str, Any]:
        if options["tile_order"] is not None:
            tiles = tile_set(options["inns_cathedrals"], options["junction_inn"])
            options["tile_order"] = list(check_draw_order(options["tile_order"], tiles.pile_counts()))
        return options

    def _options(self, options: Mapping[str, Any], seats: int) -> Options:
        return options_from(self.normalize_options(options, seats))

    # --- the hooks: the rules modules' functions themselves --------------------------------

    def initial_state(self) -> State:
        return State()

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        return rules.setup(self._options(options, seats), seats, rng)

    evolve = staticmethod(evolve)
    decide = staticmethod(rules.decide)
    """:raises: game_over, bad_command, unknown_command, not_your_turn, illegal_move."""
    legal_moves = staticmethod(legal.legal_moves)
    follower_moves = staticmethod(legal.follower_moves)
    waiting_for = staticmethod(legal.waiting_for)
    clock_seat = staticmethod(legal.owing_seat)
    """The one seat ``waiting_for`` names, without making the list (a timed fold asks after every event)."""
    view = staticmethod(views.view)
    public_view = staticmethod(views.public_view)
    private_view = staticmethod(views.private_view)
    redact = staticmethod(views.redact)
    summary = staticmethod(views.summary)

    def is_terminal(self, state: State) -> bool:
        return state.phase is Phase.OVER

    def assets(self) -> dict[str, Any]:
        """The tile designs clients draw (``GET /games/catalog/carcassonne/assets``)."""
        return tile_assets()


ENGINE = CarcassonneEngine()
