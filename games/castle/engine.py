"""The Castle engine object: the :class:`games.base.Engine` surface over the rules modules, for
one loaded :class:`~games.castle.data.Dataset`.

Where things are: :mod:`~games.castle.rules` (setup, ``decide``, legal moves, the commands and
the turn), :mod:`~games.castle.evolve` (the events), :mod:`~games.castle.scoring` (points,
majorities, the prince's doubling, the wall, aerie tokens, the final scoring),
:mod:`~games.castle.views` (views, redaction, summary, display names), :mod:`~games.castle.state`,
:mod:`~games.castle.board` (placement hooks, start spaces), :mod:`~games.castle.track` (the
scoring track), :mod:`~games.castle.data` (the dataset), :mod:`~games.castle.bots`.

The engine holds the dataset and what is derived from it once (the boards with their placement
memo, the walls, the wall-tile kinds); the rules modules read them through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import BadOptions, EngineBase, Event, OptionSpec, Rng, RuleError, Viewer
from games.castle import rules, views
from games.castle.assets import assets as dataset_assets
from games.castle.board import CastleRules, initial_board
from games.castle.data import Dataset, WallTileKind
from games.castle.evolve import evolve
from games.castle.rules import FOLLOWER_KINDS, ROLES
from games.castle.scoring import SCORED_KINDS
from games.castle.state import CastleState, Phase
from games.castle.track import Wall
from games.castle.views import LABELS
from games.draw import Draw, canonical
from games.tileboard import Board, Tile, check_draw_order

__all__ = ["FOLLOWER_KINDS", "LABELS", "ROLES", "SCORED_KINDS", "CastleEngine"]

Command = dict[str, Any]


class CastleEngine(EngineBase[CastleState]):
    """Carcassonne: The Castle (game id ``castle``) over one :class:`Dataset`."""

    name = "castle"
    title = "Carcassonne: The Castle"
    min_seats = 2
    max_seats = 2
    options: Mapping[str, OptionSpec] = {
        "falcon": OptionSpec("bool", False, "The Falcon expansion: 18 chapel/aerie tiles, gates, prince and falconer"),
        "ties": OptionSpec(
            "choice",
            "nobody",
            "A tie for a path, house, tower or chapel: 'nobody' scores (proposed default) or 'both' score in full",
            ("nobody", "both"),
        ),
        "halt_at_gates": OptionSpec(
            "bool",
            False,
            "Falcon variant 'Halt! Who goes there?': a marker reaching a gate stops there and loses the rest",
        ),
        "tile_order": OptionSpec(
            "list",
            None,
            "Castle tile ids drawn in this order instead of at random (tutorials, puzzles, a game from the table); "
            "the game ends when the list is used up. Secret: never shown to players or spectators",
            items="tile ids",
        ),
    }
    secret_options = frozenset({"tile_order"})
    revealing = frozenset({"game_started", "tile_drawn", "tile_set_aside"})
    """A draw shows the next tile (or one set aside): no undo across it."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._rules = {key: CastleRules(shape) for key, shape in dataset.boards.items()}
        self._start = {key: initial_board(rules) for key, rules in self._rules.items()}
        self._walls = {flag: Wall.from_track(dataset.track, with_gates=flag) for flag in (False, True)}
        self.wall_tile_kinds: Mapping[str, WallTileKind] = {k.name: k for k in dataset.wall_tiles}
        self._piles = {
            flag: canonical((t.id, dataset.counts[t.id]) for t in self.tile_set(flag)) for flag in (False, True)
        }
        self.wall_tiles: tuple[str, ...] = canonical((k.name, dataset.wall_tile_copies) for k in dataset.wall_tiles)
        """The wall tiles as they are dealt (``donjon-draw-2``): every copy, kinds sorted."""

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

    # --- the dataset's facts --------------------------------------------------------------------

    def tile_set(self, falcon: bool) -> tuple[Tile, ...]:
        return self.dataset.tiles + (self.dataset.falcon_tiles if falcon else ())

    def pile(self, falcon: bool) -> tuple[str, ...]:
        """The castle tiles as they are dealt (``donjon-draw-2``): every copy of :meth:`tile_set`, ids sorted."""
        return self._piles[falcon]

    def board_rules(self, falcon: bool) -> CastleRules:
        return self._rules["falcon" if falcon else "base"]

    def start_board(self, falcon: bool) -> Board:
        return self._start["falcon" if falcon else "base"]

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

    # --- the decider ------------------------------------------------------------------------------

    def initial_state(self) -> CastleState:
        return CastleState()

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        return rules.setup(self, self.normalize_options(options, seats), rng)

    evolve = evolve
    """:func:`games.castle.evolve.evolve`, bound to the engine (which holds the dataset): one
    call from the fold to the event's handler."""

    def decide(self, state: CastleState, seat: int, cmd: Command, rng: Rng) -> list[Event]:
        """:raises: game_over, bad_command, unknown_command, not_your_turn, illegal_move."""
        return rules.decide(self, state, seat, cmd, rng)

    def is_legal(self, state: CastleState, seat: int, cmd: Command) -> bool:
        """Would ``decide`` accept ``cmd``? (Draws nothing: uses a throwaway rng.)"""
        try:
            self.decide(state, seat, cmd, Draw(b"", "legality check", 0))
        except RuleError:
            return False
        return True

    def waiting_for(self, state: CastleState) -> list[int]:
        return rules.waiting_for(state)

    def clock_seat(self, state: CastleState) -> int | None:
        """The one seat ``waiting_for`` names, without making the list (a timed fold asks after every event)."""
        return rules.owing_seat(state)

    def legal_moves(self, state: CastleState, seat: int) -> list[Command]:
        return rules.legal_moves(self, state, seat)

    def tile_placements(self, state: CastleState) -> list[Command]:
        """The ``place_tile`` commands for the drawn tile (the benchmarks time this)."""
        return rules.tile_placements(self, state)

    def is_terminal(self, state: CastleState) -> bool:
        return state.phase is Phase.OVER

    # --- views ----------------------------------------------------------------------------------------

    def view(self, state: CastleState, viewer: Viewer) -> dict[str, Any]:
        return views.view(self, state, viewer)

    def public_view(self, state: CastleState) -> dict[str, Any]:
        return views.public_view(self, state)

    def private_view(self, state: CastleState, viewer: Viewer) -> dict[str, Any]:
        return views.private_view(self, state, viewer)

    def redact(self, event: Event, viewer: Viewer) -> Event | None:
        return views.redact(self, event, viewer)

    def assets(self) -> dict[str, Any]:
        """The tile designs and start spaces clients draw (``GET /games/catalog/castle/assets``)."""
        return dataset_assets(self.dataset)

    def summary(self, state: CastleState) -> dict[str, Any]:
        return views.summary(state)
