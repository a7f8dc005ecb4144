"""Properties over many seeded random games, for every player count and random option sets.

After every command: the 49 cards and 49 tokens are all somewhere (deck + hands + discard +
removed; pile + Overlord hand + board + discard + trophies + removed), hit points stay within
1..max, the seats ``waiting_for`` names are the only ones with legal moves, a few legal commands
picked at random are accepted by ``decide``, every payload is JSON-safe, and no view or redacted
event shows a viewer something it may not see. At the end: a win or a loss, and folding the
event log again gives the same state.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.base import SPECTATOR, Rng, RuleError, fold
from games.castle_panic import ENGINE
from games.castle_panic.bots import HEURISTIC, RANDOM
from games.castle_panic.data import ALL_CARDS, ALL_TOKENS
from games.castle_panic.rules import legal_moves, waiting_for
from games.castle_panic.state import OPTION_NAMES, State
from service.fairness.draw_schemes import LegacyRandom
from tests.games.castle_panic.position import play_game

FULL_CARDS = Counter(ALL_CARDS)
FULL_TOKENS = Counter(ALL_TOKENS)


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def assert_conserved(state: State) -> None:
    cards, tokens = state.cards, state.tokens
    in_play = Counter(cards.deck) + Counter(cards.discard) + Counter(cards.removed)
    for hand in cards.hands:
        in_play += Counter(hand)
    assert in_play == FULL_CARDS
    placed = Counter(tokens.pile) + Counter(tokens.overlord_hand) + Counter(tokens.discard) + Counter(tokens.removed)
    placed += Counter(m.id for m in state.board.monsters)
    for trophies in tokens.trophies:
        placed += Counter(trophies)
    assert placed == FULL_TOKENS


def assert_hit_points_in_bounds(state: State) -> None:
    for m in state.board.monsters:
        assert 1 <= m.hp <= m.max_hp, m


def secrets(state: State, viewer: int | None) -> set[str]:
    """Ids ``viewer`` must not be shown: the deck, the pile, the Overlord's hand, hidden hands."""
    assert state.config is not None
    hidden = set(state.cards.deck) | set(state.tokens.pile)
    if viewer != state.config.overlord:
        hidden |= set(state.tokens.overlord_hand)
    if state.config.options.hidden_hands:
        for seat, hand in enumerate(state.cards.hands):
            if seat != viewer:
                hidden |= set(hand)
        trade = state.turn.trade
        if trade is not None and viewer == trade.to:
            hidden.discard(trade.give)  # the card offered to the viewer is shown to it
    return hidden


def private_in(events: list, viewer: int | None) -> set[str]:
    """Ids these events moved somewhere ``viewer`` may not look: another seat's hidden hand (a
    hidden-hands draw, a trade between others) or the Overlord's hand."""
    out: set[str] = set()
    for event in events:
        p = event.payload
        if event.type == "cards_drawn" and p["hidden"] and viewer != p["seat"]:
            out |= set(p["cards"])
        elif event.type in ("trade_proposed", "cards_traded") and p["hidden"] and viewer not in (p["from"], p["to"]):
            out |= {p["give"], p["take"]} if event.type == "trade_proposed" else {p["gave"], p["got"]}
        elif event.type == "overlord_drew" and viewer != p["seat"]:
            out |= set(p["tokens"])
    out.discard(None)
    return out


def assert_views_keep_secrets(state: State, events: list) -> None:
    assert state.config is not None
    for viewer in [SPECTATOR, *range(state.config.seats)]:
        secret = secrets(state, viewer)
        view = ENGINE.view(state, viewer)
        assert json.loads(json.dumps(view)) == view
        shown = set(_strings(view))
        assert not (shown & secret), (viewer, shown & secret)
        # events: nothing still in the pile, and nothing that went (in this or an earlier event
        # of the batch) into a hand the viewer may not see; a card shown before it is drawn
        # back, e.g. discarded then reshuffled and redrawn, was public at the time
        always = set(state.tokens.pile)
        if viewer != state.config.overlord:
            always |= set(state.tokens.overlord_hand)
        moved: set[str] = set()
        for event in events:
            moved |= private_in([event], viewer)
            redacted = ENGINE.redact(event, viewer)
            assert redacted is not None
            leaked = set(_strings(redacted.payload)) & (always | moved)
            assert not leaked, (viewer, event.type, leaked)


def assert_only_waiting_seats_may_act(state: State, rng: Rng) -> None:
    assert state.config is not None
    waiting = waiting_for(state)
    for seat in range(state.config.seats):
        legal = legal_moves(state, seat)
        if state.turn.trade is not None and seat == state.turn.trade.proposer:
            assert legal == [{"type": "cancel_trade", "args": {}}]
        else:
            assert bool(legal) == (seat in waiting), (seat, waiting, legal)
        for move in rng.sample(legal, min(2, len(legal))):
            try:
                ENGINE.decide(state, seat, move, rng)
            except RuleError as error:  # pragma: no cover - the assertion message is the point
                raise AssertionError(f"legal move {move} refused: {error}") from error


def assert_payloads_safe(events: list) -> None:
    for event in events:
        assert "." not in event.type
        assert json.loads(json.dumps(event.payload)) == event.payload
        assert msgpack.unpackb(msgpack.packb(event.payload)) == event.payload


def checked_game(seed: int, seats: int, options: dict[str, bool], bot=RANDOM, views_every: int = 1) -> State:
    """A whole game with every invariant checked after every command."""
    rng = LegacyRandom(seed)
    options = ENGINE.normalize_options(options, seats)
    log = ENGINE.setup(options, seats, rng)
    state = fold(ENGINE, log)
    assert_payloads_safe(log)
    assert_views_keep_secrets(state, log)
    step = 0
    while not ENGINE.is_terminal(state):
        assert step < 5000, "a game must end"
        assert_conserved(state)
        assert_hit_points_in_bounds(state)
        assert_only_waiting_seats_may_act(state, LegacyRandom(step))
        seat = rng.choice(waiting_for(state))
        events = ENGINE.decide(state, seat, bot.choose(state, seat, rng), rng)
        for event in events:
            state = ENGINE.evolve(state, event)
        assert_payloads_safe(events)
        if step % views_every == 0:
            assert_views_keep_secrets(state, events)
        log += events
        step += 1
    assert_conserved(state)
    assert state.result is not None and state.result.outcome in ("win", "loss")
    assert state.result.reason != "turn_limit"
    assert fold(ENGINE, log) == state, "replaying the events must give the same state"
    assert legal_moves(state, 0) == [] and waiting_for(state) == []
    return state


options_strategy = st.fixed_dictionaries(
    {name: st.booleans() for name in OPTION_NAMES if name != "overlord"}
)


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32), seats=st.integers(1, 6), options=options_strategy)
def test_random_games_keep_every_invariant(seed: int, seats: int, options: dict[str, bool]) -> None:
    checked_game(seed, seats, options, views_every=3)


@settings(deadline=None, max_examples=30)
@given(seed=st.integers(0, 2**32), seats=st.integers(2, 6), options=options_strategy)
def test_random_overlord_games_keep_every_invariant(seed: int, seats: int, options: dict[str, bool]) -> None:
    checked_game(seed, seats, {**options, "overlord": True}, views_every=3)


@settings(deadline=None, max_examples=15)
@given(seed=st.integers(0, 2**32), seats=st.integers(1, 6), hidden=st.booleans(), overlord=st.booleans())
def test_heuristic_games_keep_every_invariant(seed: int, seats: int, hidden: bool, overlord: bool) -> None:
    options = {"hidden_hands": hidden, "overlord": overlord and seats > 1}
    checked_game(seed, seats, options, bot=HEURISTIC, views_every=4)


@pytest.mark.parametrize("seats", [1, 2, 3, 4, 5, 6])
def test_every_player_count_keeps_the_invariants_over_seeded_games(seats: int) -> None:
    outcomes: Counter[str] = Counter()
    for seed in range(15):
        state = checked_game(1000 * seats + seed, seats, {}, views_every=5)
        outcomes[state.result.outcome] += 1
    assert sum(outcomes.values()) == 15


def test_many_seeded_games_end_and_replay_to_the_same_state() -> None:
    for seats in range(1, 7):
        for seed in range(25):
            state, events, _ = play_game(seed, seats)
            assert state.result is not None and state.result.reason != "turn_limit"
            assert fold(ENGINE, events) == state


def test_the_same_seed_gives_the_same_game() -> None:
    first = play_game(11, 4, {"all_for_one": True})
    again = play_game(11, 4, {"all_for_one": True})
    assert first[1] == again[1]


def test_the_heuristic_bot_beats_the_random_bot() -> None:
    def wins(bot) -> int:
        return sum(play_game(seed, 4, bot=bot)[0].result.outcome == "win" for seed in range(20))

    assert wins(RANDOM) == 0
    assert wins(HEURISTIC) >= 4
