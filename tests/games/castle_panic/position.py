"""Test helpers: exact positions as literals, a scripted random source, whole games by bots.

``position(...)`` builds a :class:`State` from a short description (monsters in the notation of
``Monster.parse``, walls, towers, hands ...). Cards and tokens not placed anywhere go to the
deck / monster discard pile, so every position conserves the 49 + 49 components like a real game.

``Scripted`` stands in for the game's rng: ``choice`` returns the next scripted token (or card)
and ``randint`` the next scripted die roll, so a test says exactly what is drawn and rolled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from games.base import Bot, Event, Rng, fold
from games.castle_panic import ENGINE
from games.castle_panic.bots import RANDOM
from games.castle_panic.data import ALL_CARDS, ALL_TOKENS, ARCS
from games.castle_panic.rules import waiting_for
from games.castle_panic.state import Board, Cards, Monster, Phase, State, Tokens, Turn
from service.fairness.draw_schemes import LegacyRandom


class Scripted(LegacyRandom):
    """A random source that plays back scripted draws and die rolls, then falls back to seed 0."""

    def __init__(self, choices: Sequence[Any] = (), dice: Sequence[int] = ()) -> None:
        super().__init__(0)
        self.scripted = list(choices)
        self.dice = list(dice)

    def choice(self, seq: Sequence[Any]) -> Any:  # type: ignore[override]  # a test double: scripted draws come from sequences
        if self.scripted:
            wanted = self.scripted.pop(0)
            assert wanted in seq, f"scripted draw {wanted!r} is not available in {list(seq)!r}"
            return wanted
        return super().choice(seq)

    def randint(self, a: int, b: int) -> int:
        if self.dice:
            roll = self.dice.pop(0)
            assert a <= roll <= b
            return roll
        return super().randint(a, b)


def position(
    *,
    seats: int = 1,
    options: dict[str, Any] | None = None,
    monsters: Iterable[str] = (),
    walls: Iterable[int] = ARCS,
    towers: Iterable[int] = ARCS,
    fortified: Iterable[int] = (),
    tar: str | None = None,
    hands: Mapping[int, Sequence[str]] | None = None,
    discard: Sequence[str] = (),
    deck: Sequence[str] | None = None,
    pile: Sequence[str] = (),
    overlord_hand: Sequence[str] = (),
    phase: str = "play",
    seat: int = 0,
    turn: int = 3,
) -> State:
    """A game position from literals; everything unnamed is in the deck or the monster discard."""
    start = fold(ENGINE, ENGINE.setup(options or {}, seats, LegacyRandom(0)))
    assert start.config is not None
    board_monsters = tuple(Monster.parse(text) for text in monsters)
    hand_lists = [tuple((hands or {}).get(s, ())) for s in range(seats)]
    used_cards = Counter(card for hand in hand_lists for card in hand) + Counter(discard)
    assert all(n == 1 for n in used_cards.values()), "a card may be in one place only"
    rest = tuple(card for card in ALL_CARDS if card not in used_cards)
    # an explicit deck puts the cards named nowhere out of the game, so the total still holds
    kept = rest if deck is None else tuple(sorted(deck))
    removed = () if deck is None else tuple(card for card in rest if card not in kept)
    on_board = {m.id for m in board_monsters}
    placed = on_board | set(pile) | set(overlord_hand)
    assert len(placed) == len(on_board) + len(pile) + len(overlord_hand), "a token may be in one place only"
    token_discard = tuple(t for t in ALL_TOKENS if t not in placed)
    return replace(
        start,
        cards=Cards(deck=kept, hands=tuple(hand_lists), discard=tuple(discard), removed=removed),
        tokens=Tokens(
            pile=tuple(sorted(pile)),
            overlord_hand=tuple(overlord_hand),
            discard=token_discard,
            trophies=((),) * seats,
            removed=(),
        ),
        board=Board(
            monsters=board_monsters,
            walls=frozenset(walls),
            fortified=frozenset(fortified),
            towers=frozenset(towers),
            tar=tar,
        ),
        turn=Turn(number=turn, seat=seat, phase=Phase(phase), overlord_plays=2 if phase == "overlord" else 0),
    )


def act(
    state: State, seat: int, type_: str, rng: Rng | None = None, **args: Any
) -> tuple[State, list[Event]]:
    """Decide one command and fold its events; returns the new state and the events."""
    events = ENGINE.decide(state, seat, {"type": type_, "args": args}, rng or Scripted())
    for event in events:
        state = ENGINE.evolve(state, event)
    return state, events


def monsters(state: State) -> list[str]:
    """The board in notation, sorted: the easiest thing to compare in an assertion."""
    return sorted(m.notation() for m in state.board.monsters)


def types(events: list[Event]) -> list[str]:
    return [event.type for event in events]


def play_game(
    seed: int, seats: int, options: dict[str, Any] | None = None, bot: Bot = RANDOM, max_steps: int = 20_000
) -> tuple[State, list[Event], int]:
    """A whole game by ``bot`` for every seat; returns the final state, every event and the steps."""
    rng = LegacyRandom(seed)
    options = ENGINE.normalize_options(options or {}, seats)
    events = ENGINE.setup(options, seats, rng)
    state = fold(ENGINE, events)
    steps = 0
    while not ENGINE.is_terminal(state):
        assert steps < max_steps, "a game must end"
        seat = rng.choice(waiting_for(state))
        command = bot.choose(state, seat, rng)
        new = ENGINE.decide(state, seat, command, rng)
        for event in new:
            state = ENGINE.evolve(state, event)
        events += new
        steps += 1
    return state, events, steps
