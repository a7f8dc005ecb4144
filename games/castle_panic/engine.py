"""The Castle Panic engine object: the :class:`games.base.Engine` surface over the rules modules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import BadOptions, EngineBase, Event, OptionSpec, Rng
from games.castle_panic import rules, views
from games.castle_panic.evolve import evolve
from games.castle_panic.state import OPTION_NAMES, State

__all__ = ["CastlePanicEngine", "OPTIONS"]

OPTIONS: Mapping[str, OptionSpec] = {
    "master_slayer": OptionSpec(
        "bool", True, "Players keep the monsters they slay as trophies; the best is Master Slayer (off: pure co-op)."
    ),
    "overlord": OptionSpec(
        "bool", False, "Overlord version: the last seat plays the monsters from a hidden hand of 3 tokens (2+ seats)."
    ),
    "easier_battles": OptionSpec(
        "bool", False, "Remove Draw 4, Orc Warlord, Troll Mage, two plagues, 3 colour moves and 3 giant boulders."
    ),
    "all_for_one": OptionSpec(
        "bool", False, "All For One!: an archer, knight and swordsman of one colour together slay a monster of it."
    ),
    "heroic_powers": OptionSpec("bool", False, "Heroes may also hit a monster in the Castle ring of their colour."),
    "my_home_is_my_castle": OptionSpec(
        "bool", False, "Each player claims a tower and is out when it falls; the King's Tower costs everyone a card."
    ),
    "dwindling_resources": OptionSpec(
        "bool", False, "Each reshuffle of the castle deck removes 1 Brick and 1 Mortar from the game."
    ),
    "under_construction": OptionSpec("bool", False, "Start with no walls."),
    "hidden_hands": OptionSpec(
        "bool", False, "Friends Close, Enemies Closer: hands are hidden from the other players."
    ),
    "boss_moves_self": OptionSpec(
        "bool", False, "Open question 2: the Orc Warlord / Troll Mage also move themselves with their effect."
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

    def initial_state(self) -> State:
        return State()

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        return rules.setup(self.normalize_options(options, seats), seats, rng)

    evolve = staticmethod(evolve)
    """The module's function itself: a fold calls it once per event, with no method in between."""

    def decide(self, state: State, seat: int, cmd: dict[str, Any], rng: Rng) -> list[Event]:
        """:raises: game_over, bad_command, unknown_command, not_your_turn, illegal_move."""
        return rules.decide(state, seat, cmd, rng)

    def legal_moves(self, state: State, seat: int) -> list[dict[str, Any]]:
        return rules.legal_moves(state, seat)

    def view(self, state: State, viewer: int | None) -> dict[str, Any]:
        return views.view(state, viewer)

    def public_view(self, state: State) -> dict[str, Any]:
        return views.public_view(state)

    def private_view(self, state: State, viewer: int | None) -> dict[str, Any]:
        return views.private_view(state, viewer)

    def redact(self, event: Event, viewer: int | None) -> Event | None:
        return views.redact(event, viewer)

    def is_terminal(self, state: State) -> bool:
        return state.result is not None

    def summary(self, state: State) -> dict[str, Any]:
        return views.summary(state)

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
        waiting = rules.waiting_for(state)
        return waiting[0] if waiting and waiting == [rules.acting_seat(state)] else None

    def timeout_answer(self, state: State, seat: int) -> dict[str, Any] | None:
        """A trade offer to ``seat`` is declined when its time runs out: accepting would choose
        for it, and declining changes nothing but the offer. Discards and damage are owed
        (``on_timeout`` applies to them, as to a move of the seat's turn)."""
        return rules.timeout_answer(state, seat)

    def cooperative(self, options: Mapping[str, Any]) -> bool:
        """Castle players win or lose together, except against the Overlord."""
        return not options.get("overlord", False)

    def waiting_for(self, state: State) -> list[int]:
        """Seats that owe a command now (the service may use it to drive bots)."""
        return rules.waiting_for(state)
