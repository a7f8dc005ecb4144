"""The Carcassonne engine object: the :class:`games.base.Engine` surface over the rules modules.

Carcassonne (base game C2 with farmers, optional Inns & Cathedrals). Where things are:
:mod:`~games.carcassonne.rules` (setup, ``decide``, legal moves, the commands),
:mod:`~games.carcassonne.evolve` (the events), :mod:`~games.carcassonne.scoring` (points),
:mod:`~games.carcassonne.views` (views, redaction, summary), :mod:`~games.carcassonne.state`
(state and options), :mod:`~games.carcassonne.board` (placement hook, start board),
:mod:`~games.carcassonne.tiles` (the tile data), :mod:`~games.carcassonne.bots`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import EngineBase, Event, OptionSpec, Rng
from games.carcassonne import rules, views
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

    # --- the decider ------------------------------------------------------------------------

    def initial_state(self) -> State:
        return State()

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        return rules.setup(self._options(options, seats), seats, rng)

    evolve = staticmethod(evolve)

    def decide(self, state: State, seat: int, cmd: Command, rng: Rng) -> list[Event]:
        """:raises: game_over, bad_command, unknown_command, not_your_turn, illegal_move."""
        return rules.decide(state, seat, cmd, rng)

    def waiting_for(self, state: State) -> list[int]:
        return rules.waiting_for(state)

    def clock_seat(self, state: State) -> int | None:
        """The one seat ``waiting_for`` names, without making the list (a timed fold asks after every event)."""
        return rules.owing_seat(state)

    def legal_moves(self, state: State, seat: int) -> list[Command]:
        return rules.legal_moves(state, seat)

    def follower_moves(self, state: State, seat: int) -> list[Command]:
        return rules.follower_moves(state, seat)

    # --- views --------------------------------------------------------------------------------

    def view(self, state: State, viewer: int | None) -> dict[str, Any]:
        return views.view(state, viewer)

    def public_view(self, state: State) -> dict[str, Any]:
        return views.public_view(state)

    def private_view(self, state: State, viewer: int | None) -> dict[str, Any]:
        return views.private_view(state, viewer)

    def redact(self, event: Event, viewer: int | None) -> Event | None:
        return views.redact(event, viewer)

    def is_terminal(self, state: State) -> bool:
        return state.phase is Phase.OVER

    def assets(self) -> dict[str, Any]:
        """The tile designs clients draw (``GET /games/catalog/carcassonne/assets``)."""
        return tile_assets()

    def summary(self, state: State) -> dict[str, Any]:
        return views.summary(state)


ENGINE = CarcassonneEngine()
