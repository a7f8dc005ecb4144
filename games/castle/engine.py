"""The Castle engine: a small class, :class:`CastleEngine`, that is the
:class:`games.base.Engine` of :class:`~games.castle.state.CastleState` for one loaded
:class:`~games.castle.data.Dataset`.

It is the dataset's :class:`~games.castle.tables.CastleTables` with the catalog and the options,
and its hooks are the rules modules' functions themselves (each takes the tables first), so no
method forwards to another. The modules import one way: :mod:`~games.castle.data`,
:mod:`~games.castle.track`, :mod:`~games.castle.state`, :mod:`~games.castle.board` (placement
hooks, start spaces), :mod:`~games.castle.tables`, :mod:`~games.castle.scoring` (points,
majorities, the prince's doubling, the wall, aerie tokens, the final scoring),
:mod:`~games.castle.evolve` (the events), :mod:`~games.castle.legal` (legal moves and the queries
behind them), :mod:`~games.castle.rules` (setup, ``decide``, the commands and the turn),
:mod:`~games.castle.views` (views, redaction, summary, display names), this module, then
:mod:`~games.castle.bots`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import BadOptions, EngineBase, Event, OptionSpec, Rng, RuleError
from games.castle import legal, rules, views
from games.castle.assets import assets as dataset_assets
from games.castle.evolve import evolve
from games.castle.legal import FOLLOWER_KINDS, ROLES
from games.castle.scoring import SCORED_KINDS
from games.castle.state import CastleState, Phase
from games.castle.tables import CastleTables
from games.castle.views import LABELS
from games.draw import Draw
from games.tileboard import check_draw_order

__all__ = ["FOLLOWER_KINDS", "LABELS", "ROLES", "SCORED_KINDS", "CastleEngine"]

Command = dict[str, Any]


class CastleEngine(CastleTables, EngineBase[CastleState]):
    """Carcassonne: The Castle (game id ``castle``) over one :class:`Dataset`: its
    :class:`~games.castle.tables.CastleTables` (the dataset's facts, the game id and its secret
    option) with the catalog, the options and the hooks of the engine contract."""

    title = "Carcassonne: The Castle"
    min_seats = 2
    max_seats = 2
    options: Mapping[str, OptionSpec] = {
        "falcon": OptionSpec(
            "bool", False, "The Falcon expansion: 18 chapel/aerie tiles, gates, prince and falconer", label="The Falcon"
        ),
        "ties": OptionSpec(
            "choice",
            "nobody",
            "A tie for a path, house, tower or chapel: 'nobody' scores (proposed default) or 'both' score in full",
            ("nobody", "both"),
            label="Ties",
        ),
        "halt_at_gates": OptionSpec(
            "bool",
            False,
            "Falcon variant 'Halt! Who goes there?': a marker reaching a gate stops there and loses the rest",
            label="Halt at the gates",
        ),
        "tile_order": OptionSpec(
            "list",
            None,
            "Castle tile ids drawn in this order instead of at random (tutorials, puzzles, a game from the table); "
            "the game ends when the list is used up. Secret: never shown to players or spectators",
            items="tile ids",
            label="Tile order",
        ),
    }
    revealing = frozenset({"game_started", "tile_drawn", "tile_set_aside"})
    """A draw shows the next tile (or one set aside): no undo across it."""

    # --- catalog and options --------------------------------------------------------------------

    def catalog_extras(self) -> dict[str, Any]:
        provisional = dict(self.dataset.provisional)
        return {
            "dataset": self.dataset.name,
            "provisional": (
                f"The rules are implemented in full, but the physical data of dataset {self.dataset.name!r} is "
                f"partly provisional: {', '.join(provisional)}. An operator can load a corrected dataset file."
                if provisional else ""
            ),
            "provisional_parts": provisional,
            "labels": {k: dict(v) for k, v in LABELS.items()},
            "wall_tiles": [self.wall_tile_info(k.name) for k in self.dataset.wall_tiles],
            "commands": list(rules.COMMANDS),
        }

    def check_options(self, options: dict[str, Any], seats: int) -> dict[str, Any]:
        if options["halt_at_gates"] and not options["falcon"]:
            raise BadOptions("option 'halt_at_gates' needs the Falcon gates (falcon: true)")
        if options["tile_order"] is not None:
            available = {t.id: self.dataset.counts[t.id] for t in self.tile_set(options["falcon"])}
            options["tile_order"] = list(check_draw_order(
                options["tile_order"], available, allow_empty=False, noun="castle tile of this game"))
        return options

    # --- the hooks: the rules modules' functions themselves, which take these tables first ---------

    def initial_state(self) -> CastleState:
        return CastleState()

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        return rules.setup(self, self.normalize_options(options, seats), rng)

    evolve = evolve
    decide = rules.decide
    """:raises: game_over, bad_command, unknown_command, not_your_turn, illegal_move."""
    legal_moves = legal.legal_moves
    tile_placements = legal.tile_placements
    """The ``place_tile`` commands for the drawn tile (the benchmarks time this)."""
    waiting_for = staticmethod(legal.waiting_for)
    clock_seat = staticmethod(legal.owing_seat)
    """The one seat ``waiting_for`` names, without making the list (a timed fold asks after every event)."""
    view = views.view
    public_view = views.public_view
    private_view = views.private_view
    redact = views.redact
    summary = staticmethod(views.summary)

    def is_terminal(self, state: CastleState) -> bool:
        return state.phase is Phase.OVER

    def is_legal(self, state: CastleState, seat: int, cmd: Command) -> bool:
        """Would ``decide`` accept ``cmd``? (Draws nothing: uses a throwaway rng.)"""
        try:
            self.decide(state, seat, cmd, Draw(b"", "legality check", 0))
        except RuleError:
            return False
        return True

    def assets(self) -> dict[str, Any]:
        """The tile designs and start spaces clients draw (``GET /games/catalog/castle/assets``)."""
        return dataset_assets(self.dataset)
