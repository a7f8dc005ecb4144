"""The Castle Panic engine: a small class, :class:`CastlePanicEngine`, that is the
:class:`games.base.Engine` of :class:`~games.castle_panic.state.State`.

The class holds the catalog and the options; its hooks are the rules modules' functions
themselves (a method only where the engine decides something: reveals, the clock's seat, who
wins together). The modules import one way: :mod:`~games.castle_panic.data`,
:mod:`~games.castle_panic.state`, :mod:`~games.castle_panic.scoring`,
:mod:`~games.castle_panic.evolve`, the steps of ``decide`` (:mod:`~games.castle_panic.run`,
:mod:`~games.castle_panic.drawing`, :mod:`~games.castle_panic.monsters`,
:mod:`~games.castle_panic.turns`, :mod:`~games.castle_panic.phases`,
:mod:`~games.castle_panic.cards`), :mod:`~games.castle_panic.legal`,
:mod:`~games.castle_panic.rules`, :mod:`~games.castle_panic.views`, this module, then
:mod:`~games.castle_panic.bots`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import BadOptions, EngineBase, Event, OptionSpec, Rng
from games.castle_panic import legal, rules, run, views
from games.castle_panic.evolve import evolve
from games.castle_panic.state import OPTION_NAMES, State

__all__ = ["CastlePanicEngine", "OPTIONS"]

OPTIONS: Mapping[str, OptionSpec] = {
    "master_slayer": OptionSpec(
        "bool", True, "Players keep the monsters they slay as trophies; the best is Master Slayer (off: pure co-op).",
        label="Master Slayer",
    ),
    "overlord": OptionSpec(
        "bool", False, "Overlord version: the last seat plays the monsters from a hidden hand of 3 tokens (2+ seats).",
        label="Overlord",
    ),
    "easier_battles": OptionSpec(
        "bool", False, "Remove Draw 4, Orc Warlord, Troll Mage, two plagues, 3 colour moves and 3 giant boulders.",
        label="Easier battles",
    ),
    "all_for_one": OptionSpec(
        "bool", False, "All For One!: an archer, knight and swordsman of one colour together slay a monster of it.",
        label="All For One!",
    ),
    "heroic_powers": OptionSpec(
        "bool", False, "Heroes may also hit a monster in the Castle ring of their colour.", label="Heroic powers"
    ),
    "my_home_is_my_castle": OptionSpec(
        "bool", False, "Each player claims a tower and is out when it falls; the King's Tower costs everyone a card.",
        label="My home is my castle",
    ),
    "dwindling_resources": OptionSpec(
        "bool", False, "Each reshuffle of the castle deck removes 1 Brick and 1 Mortar from the game.",
        label="Dwindling resources",
    ),
    "under_construction": OptionSpec("bool", False, "Start with no walls.", label="Under construction"),
    "hidden_hands": OptionSpec(
        "bool", False, "Friends Close, Enemies Closer: hands are hidden from the other players.",
        label="Hidden hands",
    ),
    "boss_moves_self": OptionSpec(
        "bool", False, "Open question 2: the Orc Warlord / Troll Mage also move themselves with their effect.",
        label="Bosses move themselves",
    ),
}
assert tuple(OPTIONS) == OPTION_NAMES


class CastlePanicEngine(EngineBase[State]):
    """Castle Panic (Fireside Games): co-op with Master Slayer, solitaire, Overlord.

    The catalog entry and the option checks come from :class:`games.base.EngineBase`; the game
    adds one rule that ties options to seats (the Overlord needs a castle player besides).
    """

    name = "castle_panic"
    title = "Castle Panic"
    min_seats = 1
    max_seats = 6
    options: Mapping[str, OptionSpec] = OPTIONS
    secret_options: frozenset[str] = frozenset()
    revealing = frozenset({
        "game_started", "monster_placed", "token_revealed", "cards_drawn", "deck_reshuffled",
        "overlord_drew", "overlord_played", "trade_proposed", "cards_traded",
    })
    """Draws of cards and monster tokens, die rolls, and a hand's cards shown to a trade partner."""
    notes = (
        "1 seat is the solitaire game (hand of 6, discard and draw up to 2, no trading).",
        "With 'overlord' the last seat is the Overlord and needs at least one castle player.",
        "Token counts follow 3 of 4 sources (10 trolls, one All Players Discard 1).",
    )

    def check_options(self, options: dict[str, Any], seats: int) -> dict[str, Any]:
        # Not ``seat_range``: the refusal should name the option that needs the second seat.
        if options["overlord"] and seats < 2:
            raise BadOptions("option 'overlord' needs at least 2 seats (castle players plus the Overlord)")
        return options

    # --- the hooks: the rules modules' functions themselves --------------------------------

    def initial_state(self) -> State:
        return State()

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        return rules.setup(self.normalize_options(options, seats), seats, rng)

    evolve = staticmethod(evolve)
    """The module's function itself: a fold calls it once per event, with no method in between."""
    decide = staticmethod(rules.decide)
    """:raises: game_over, bad_command, unknown_command, not_your_turn, illegal_move."""
    legal_moves = staticmethod(legal.legal_moves)
    waiting_for = staticmethod(run.waiting_for)
    """Seats that owe a command now (the service may use it to drive bots)."""
    timeout_answer = staticmethod(legal.timeout_answer)
    """A trade offer to ``seat`` is declined when its time runs out: accepting would choose for
    it, and declining changes nothing but the offer. Discards and damage are owed (``on_timeout``
    applies to them, as to a move of the seat's turn)."""
    view = staticmethod(views.view)
    public_view = staticmethod(views.public_view)
    private_view = staticmethod(views.private_view)
    redact = staticmethod(views.redact)
    summary = staticmethod(views.summary)

    def is_terminal(self, state: State) -> bool:
        return state.result is not None

    def reveals(self, state: State, event: Event) -> bool:
        """Draws, rolls and trade offers always; with hidden hands also a card played or
        discarded from a hand nobody else saw."""
        if event.type in self.revealing:
            return True
        hidden = state.config is not None and state.config.options.hidden_hands
        return hidden and event.type in ("card_played", "cards_discarded")

    def clock_seat(self, state: State) -> int | None:
        """The turn's player while it alone owes a command (the rule of games recorded before
        every owing seat ran a clock: trades, discards and damage owed by another seat paused
        every clock)."""
        waiting = run.waiting_for(state)
        return waiting[0] if waiting and waiting == [run.acting_seat(state)] else None

    def cooperative(self, options: Mapping[str, Any]) -> bool:
        """Castle players win or lose together, except against the Overlord."""
        return not options.get("overlord", False)
