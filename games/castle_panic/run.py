"""The scratch run of one ``decide``/``setup`` (:class:`Run`), the game's limits and random
sources, and the small readings of the state that ``decide`` and ``legal_moves`` share (so that
each command ``legal_moves`` lists is one ``decide`` accepts)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from games.base import (
    Event,
    IllegalMove,
    NotYourTurn,
)
from games.castle_panic.data import (
    ARC_COLOUR,
    CardKind,
    Colour,
    Ring,
    Soldier,
)
from games.castle_panic.evolve import evolve
from games.castle_panic.state import Monster, Options, Phase, State

MAX_TURNS = 500
"""Safety net: a game still running after this many turns ends as a loss (``turn_limit``)."""
MAX_PROPOSALS = 3
"""Trade proposals that may be declined or cancelled in one turn."""
MAX_PLAYS = 100
"""Card plays in one turn (far above any real turn; bounds Scavenge / Draw 2 chains)."""

PLAGUES: dict[str, Soldier] = {
    "plague_archers": Soldier.ARCHER,
    "plague_knights": Soldier.KNIGHT,
    "plague_swordsmen": Soldier.SWORDSMAN,
}
COLOUR_MOVES: dict[str, Colour] = {"move_red": Colour.RED, "move_green": Colour.GREEN, "move_blue": Colour.BLUE}
EXTRA_DRAWS: dict[str, int] = {"draw_3": 3, "draw_4": 4, "goblin_king": 3}
PLAY_PHASES = (Phase.DISCARD, Phase.TRADE, Phase.PLAY)

CARDS = "cards"
"""The castle deck's deals (``<game id>:deal:cards``, numbered by the reshuffles before)."""
TOKENS = "tokens"
"""The monster pile's deal (``<game id>:deal:tokens``): monsters, bosses and effects."""
SETUP_ARCS = "setup_arcs"
"""The arcs 1-6 dealt to the six setup monsters (``<game id>:deal:setup_arcs``)."""
DIE = "die"
"""Every d6 roll: the stream ``<game id>:die`` numbered by the rolls before it."""


class Run:
    """The scratch state of one ``decide``/``setup`` and the events emitted so far."""

    __slots__ = ("events", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        self.events: list[Event] = []

    def emit(self, type_: str, payload: dict[str, Any]) -> None:
        event = Event(type_, payload)
        self.state = evolve(self.state, event)
        self.events.append(event)


# --- small readings of the state ---------------------------------------------------------------


def acting_seat(state: State) -> int:
    """The seat whose turn step it is: the Overlord during its turn, else the turn's player."""
    if state.turn.phase in (Phase.OVERLORD, Phase.OVERLORD_DRAW) and state.config is not None:
        assert state.config.overlord is not None
        return state.config.overlord
    return state.turn.seat


def living_castle_seats(state: State) -> tuple[int, ...]:
    """Castle players still in the game (My Home Is My Castle can put a player out)."""
    assert state.config is not None
    out = state.house.eliminated
    return tuple(seat for seat in state.config.castle_seats if seat not in out)


def waiting_for(state: State) -> list[int]:
    """The seats that owe a command now (several only when all owe a discard)."""
    if state.config is None or state.result is not None:
        return []
    pending = state.pending
    if pending.damage:
        return [pending.damage[0].seat]
    if pending.discards:
        return sorted(pending.discards)
    if state.turn.trade is not None:
        return [state.turn.trade.to]
    if state.turn.phase in PLAY_PHASES or state.turn.phase is Phase.OVERLORD:
        return [acting_seat(state)]
    return []


def find_monster(state: State, monster: str) -> Monster | None:
    for m in state.board.monsters:
        if m.id == monster:
            return m
    return None


def reaches(kind: CardKind, monster: Monster, options: Options) -> bool:
    """Whether hit card ``kind`` can hit ``monster``: ring and colour must both match."""
    if kind.colour is not None and ARC_COLOUR[monster.arc] is not kind.colour:
        return False
    if monster.ring in kind.rings:
        return True
    return options.heroic_powers and kind.soldier is Soldier.HERO and monster.ring == Ring.CASTLE


def trade_partners(state: State, seat: int) -> list[int]:
    """Seats ``seat`` may propose a trade to now (they must hold a card; so must ``seat``)."""
    assert state.config is not None
    if not state.cards.hands[seat]:
        return []
    hands = state.cards.hands
    return [other for other in living_castle_seats(state) if other != seat and hands[other]]


def can_propose(state: State, seat: int) -> bool:
    assert state.config is not None
    turn = state.turn
    return (
        turn.trade is None
        and turn.trades < state.config.trades_per_turn
        and turn.proposals < MAX_PROPOSALS
        and bool(trade_partners(state, seat))
    )


def overlord_must_play(state: State) -> bool:
    """Termination guard: with the board empty the Overlord may not pass a turn unplayed."""
    turn = state.turn
    return (
        not state.board.monsters
        and bool(state.tokens.overlord_hand)
        and turn.overlord_plays > 0
        and not turn.overlord_played
    )


def hands_hidden(state: State) -> bool:
    """Hidden-hands rule: events that move cards into hands carry this so ``redact`` can tell."""
    assert state.config is not None
    return state.config.options.hidden_hands


def can_draw_2(state: State) -> bool:
    return bool(state.cards.deck or state.cards.discard)


def may_act(state: State) -> list[int]:
    """The seats that may send a command now: those the game waits on, and the proposer of an
    open trade offer (it may cancel it)."""
    trade = state.turn.trade
    return [*waiting_for(state), *([trade.proposer] if trade is not None else [])]


def _owes(state: State, seat: int, what: str) -> None:
    """Raise unless ``seat`` may act at all now; ``what`` names the command for the message."""
    if seat not in waiting_for(state):
        owed = waiting_for(state)
        raise NotYourTurn(f"seat {seat} cannot {what} now: waiting for seat(s) {owed}")


def turn_step(state: State, seat: int, what: str, phases: Iterable[Phase]) -> None:
    """The command is a step of the active player's turn in one of ``phases``."""
    _owes(state, seat, what)
    if state.pending.damage or state.pending.discards or state.turn.trade is not None:
        raise IllegalMove(f"{what} must wait: a choice is pending")
    phases = tuple(phases)
    if state.turn.phase not in phases or seat != acting_seat(state):
        names = [p.value for p in phases]
        raise IllegalMove(f"{what} is allowed in phase {names}, not {state.turn.phase.value!r}")


def in_hand(state: State, seat: int, card: str) -> None:
    if card not in state.cards.hands[seat]:
        raise IllegalMove(f"card {card!r} is not in seat {seat}'s hand")
