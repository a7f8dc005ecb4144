"""Deal once (``donjon-draw-2``): an event put before a decision, offline on a copy of a game (a
clock running out, a seat leaving, a forged move), changes no card, tile, token or roll that was
already determined; under ``donjon-draw-1`` it does.

A game here is played by the service's own decision functions with no store: the creation batch
of a game of bots, then each bot's move with the service's bot rng. The copy is the same game
with one event more before the ``k``-th decision; both are played to their end and their draws
compared deal by deal (:func:`draws_of`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import games
from games.base import Event
from games.draw import DEAL_VERSION, DRAW_VERSION
from projections.game import CLOCK_EXPIRED, SEAT_LEFT, GameProjection
from service.bots import bot_rng, bots_for, due_bot
from service.play import decisions

ENGINES = games.default_engines()
TABLES: dict[str, tuple[int, dict[str, Any]]] = {
    "carcassonne": (2, {}),
    "carcassonne_inns": (3, {"inns_cathedrals": True}),
    "castle": (2, {}),
    "castle_falcon": (2, {"falcon": True}),
    "castle_panic": (3, {}),
    "castle_panic_overlord": (3, {"overlord": True}),
    "castle_panic_dwindling": (1, {"dwindling_resources": True}),
}
"""Tables of the test: seats and options per game (the key's first part names the game)."""
INSERTS = ("clock_expired", "seat_left", "forged_move")
Deals = dict[tuple[str, int], list[Any]]


def _game(table: str) -> str:
    return max((name for name in ENGINES if table == name or table.startswith(name + "_")), key=len)


@dataclass
class Played:
    """A game played to its end: its engine events in order, and the commands of each decision."""

    events: list[Event]
    commands: list[tuple[int, dict[str, Any]]]


def draws_of(game: str, events: list[Event]) -> Deals:
    """Every drawn item, by deal (deck, number) in draw order: what ``docs/fairness.md`` deals."""
    deals: Deals = defaultdict(list)
    reshuffles = 0
    for event in events:
        kind, p = event.type, event.payload
        if kind in ("tile_drawn", "tile_discarded", "tile_set_aside"):
            deals[("tiles", 0)].append(p["tile"])
        elif kind == "wall_tile_taken":
            deals[("wall_tiles", 0)].append(p["tile"])
        elif kind == "deck_reshuffled":
            reshuffles += 1
        elif kind == "cards_drawn":
            deals[("cards", reshuffles)].extend(p["cards"])
        elif kind == "overlord_drew":
            deals[("tokens", 0)].extend(p["tokens"])
        elif kind in ("monster_placed", "token_revealed"):
            source = p["source"]
            if source == "setup":
                deals[("setup_arcs", 0)].append(p["arc"])
            elif source == "pile":
                deals[("tokens", 0)].append(p.get("monster", p.get("token")))
            if p.get("roll") is not None:
                deals[("die", 0)].append(p["roll"])
    return dict(deals)


def _started(table: str, seed: bytes, draw: str) -> tuple[GameProjection, dict[str, Any], list[Event]]:
    """The game of bots ``table`` as its creation batch leaves it, with the setup's engine events."""
    game = _game(table)
    engine = ENGINES[game]
    seats, options = TABLES[table]
    options = engine.normalize_options(options, seats)
    names = sorted(bots_for(engine))
    bots = {seat: names[seat % len(names)] for seat in range(seats)}
    created = decisions.game_created(game, engine, options, seats, seed, draw=draw)
    events = decisions.creation_batch(engine, created, bots, seed=seed, game_id=table, options=options)
    projection = decisions.Batch(table, events, 0, 1).folded(GameProjection.empty(table, engine))
    return projection, options, [event for event in events if "." not in event.type]


def _inserted(projection: GameProjection, kind: str, seat: int, forged: int) -> tuple[GameProjection, Any]:
    """``projection`` with the inserted event (``None``: a forged move, returned as a command)."""
    if kind == "clock_expired":
        event = Event(CLOCK_EXPIRED, {"seat": seat})
    elif kind == "seat_left" and seat not in projection.left:
        takeover = decisions.takeover_bot(list(bots_for(projection.engine)))
        event = Event(SEAT_LEFT, {"seat": seat, "reason": "timeout", "bot": takeover})
    else:
        legal = projection.engine.legal_moves(projection.state, seat)
        return projection, legal[forged % len(legal)]
    return decisions.Batch(projection.game_id, [event], projection.version, 1).folded(projection), None


def play(table: str, seed: bytes, draw: str, insert: tuple[int, str, int] | None = None) -> Played:
    """The game of bots ``table`` keyed by ``seed`` under ``draw``, with ``insert`` = (the
    decision it goes before, its kind, which legal move a forged one is) when given."""
    projection, options, events = _started(table, seed, draw)
    engine = projection.engine
    bots = bots_for(engine)
    commands: list[tuple[int, dict[str, Any]]] = []
    for step in range(5000):
        due = due_bot(engine, projection.state, projection.bots)
        if due is None:
            break
        seat, name = due
        command = None
        if insert is not None and insert[0] == step:
            projection, command = _inserted(projection, insert[1], seat, insert[2])
            due = due_bot(engine, projection.state, projection.bots)
            assert due is not None and due[0] == seat
            name = due[1]
        if command is None:
            command = bots[name].choose(projection.state, seat, bot_rng(projection, seed, seat))
        batch = decisions.command_decision(projection, seat, command, seed=seed, options=options, ts=1,
                                           command_id=f"c{step}")
        events.extend(event for event in batch.events if "." not in event.type)
        commands.append((seat, command))
        projection = batch.applied_to(projection)
    assert engine.is_terminal(projection.state)
    return Played(events, commands)


def consistent(before: Deals, after: Deals) -> list[str]:
    """Where ``after`` draws something else than ``before`` from a deal both made: each deal's
    items must agree as far as both games drew from it (they may draw more or less of it, since
    they play differently after the insertion). A reshuffle's deal is compared only when both
    games dealt it from the same contents (what a deck holds when it runs out is play, not luck)."""
    problems = []
    for key in before.keys() & after.keys():
        if key[0] == "cards" and key[1] > 0:
            continue  # compared by test_a_reshuffle_of_the_same_cards_deals_the_same_order
        a, b = before[key], after[key]
        n = min(len(a), len(b))
        if a[:n] != b[:n]:
            first = next(i for i in range(n) if a[i] != b[i])
            problems.append(f"{key}: draw {first} is {b[first]!r}, was {a[first]!r}")
    return problems


SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("table", sorted(TABLES))
@SLOW
@given(seed=st.binary(min_size=32, max_size=32), step=st.integers(0, 40), kind=st.sampled_from(INSERTS),
       forged=st.integers(0, 1000))
def test_an_event_put_before_a_decision_changes_no_draw_already_determined(table, seed, step, kind, forged):
    honest = play(table, seed, DEAL_VERSION)
    step = min(step, len(honest.commands) - 1)
    changed = play(table, seed, DEAL_VERSION, (step, kind, forged))
    assert consistent(draws_of(_game(table), honest.events), draws_of(_game(table), changed.events)) == []
    if kind == "clock_expired":  # nothing the engine or a bot reads changed: the very same game
        assert changed.events == honest.events and changed.commands == honest.commands


def test_under_donjon_draw_1_one_event_more_changes_the_draws_that_follow():
    """The flaw ``donjon-draw-2`` removes (issue 22): with a clock running out before a decision,
    most games of the old scheme draw other tiles, cards and rolls afterwards."""
    changed = 0
    for number in range(12):
        for table in ("carcassonne", "castle", "castle_panic"):
            seed = bytes([number]) * 32
            honest = play(table, seed, DRAW_VERSION)
            other = play(table, seed, DRAW_VERSION, (3, "clock_expired", 0))
            changed += bool(consistent(draws_of(_game(table), honest.events), draws_of(_game(table), other.events)))
    assert changed >= 30  # of 36


def test_a_reshuffle_of_the_same_cards_deals_the_same_order():
    """A deal is keyed by its deck and number, and shuffles its contents in canonical order: the
    same contents give the same order whatever came before; another number another order."""
    source = decisions.decision_rng(_started("castle_panic", bytes(32), DEAL_VERSION)[0], bytes(32))
    contents = tuple(f"card#{n:02}" for n in range(20))
    order = source.deal("cards", 3, contents)
    assert order is not None and order == source.deal("cards", 3, list(contents))
    assert sorted(order) == list(contents)
    assert order != source.deal("cards", 4, contents) != source.deal("tokens", 3, contents)


def test_the_service_shuffles_each_deal_once_however_many_decisions_read_it(monkeypatch):
    """The service's dealer remembers its deals (bounded: ``DEALS_KEPT``): a whole game of
    Carcassonne shuffles its tiles once, not once per draw."""
    from games.draw import Draw
    from service.fairness import draw_schemes

    shuffles: list[int] = []
    real = Draw.shuffle

    def counted(self: Draw, items: list[Any]) -> None:
        shuffles.append(len(items))
        real(self, items)

    monkeypatch.setattr(Draw, "shuffle", counted)
    played = play("carcassonne", b"once" * 8, DEAL_VERSION)
    assert sum(e.type == "tile_drawn" for e in played.events) > 30
    assert shuffles == [71]
    assert 0 < len(draw_schemes._DEALS) <= draw_schemes.DEALS_KEPT
