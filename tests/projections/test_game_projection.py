"""The game projection: status, seats, engine state, and refusal of broken streams."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from games.castle_panic import ENGINE
from games.castle_panic.state import Trade
from projections.game import GameProjection, ProjectionError, Status
from projections.lifecycle import OWING, TURN, Features
from service.fairness.draw_schemes import LegacyRandom
from tests.games.castle_panic.position import position
from tests.projections.helpers import Env, opening, random_game
from tests.tinygame import TINY

FINISHED = random_game(random.Random(1))


def test_a_created_game_is_open_with_empty_seats():
    projection = GameProjection.fold("g1", TINY, opening()[:1])
    assert (projection.version, projection.status, projection.game, projection.seats) == (1, Status.OPEN, "tiny", 2)
    assert projection.names == (None, None)
    assert projection.free_seats == [0, 1]
    assert projection.options == {"target": 6}
    assert projection.engine_events == 0


def test_the_last_seat_makes_the_game_active_and_setup_events_fold_into_the_engine_state():
    projection = GameProjection.fold("g1", TINY, opening())
    assert projection.status is Status.ACTIVE
    assert projection.names == ("ann", "bob")
    assert projection.version == 6
    assert projection.engine_events == 3
    assert [len(hand) for hand in projection.state.hands] == [1, 1]
    assert projection.seat_list() == [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}]


def test_a_bot_seat_is_named_by_its_seat_taken_event_and_listed_with_its_bot():
    stream = opening()[:1] + [Env(2, "game.seat_taken", {"seat": 1, "name": "first bot", "bot": "first"})]
    projection = GameProjection.fold("g1", TINY, stream)
    assert (projection.bots, projection.has_bots, projection.free_seats) == ((None, "first"), True, [0])
    assert projection.seat_list() == [{"seat": 0, "name": None}, {"seat": 1, "name": "first bot", "bot": "first"}]
    assert GameProjection.fold("g1", TINY, opening()).bots == (None, None)


def test_game_finished_reveals_the_seed_and_summary():
    envs = random_game(LegacyRandom(3))
    projection = GameProjection.fold("g1", TINY, envs)
    assert projection.status is Status.FINISHED
    assert projection.seed == bytes(range(32)).hex()
    assert projection.summary == TINY.summary(projection.state)


def test_apply_all_skips_what_is_already_folded():
    envs = opening()
    half = GameProjection.fold("g1", TINY, envs[:3])
    assert half.apply_all(envs) == GameProjection.fold("g1", TINY, envs)


def test_projections_are_never_mutated():
    envs = opening()
    before = GameProjection.fold("g1", TINY, envs[:3])
    after = before.apply(envs[3])
    assert (before.version, before.engine_events, after.version) == (3, 0, 4)


@pytest.mark.parametrize(
    "stream, message",
    [
        ([Env(2, "game.created", {})], "expected version 1, got 2"),
        ([Env(1, "started", {"target": 6})], "the first event is 'started'"),
        (opening()[:1] + [Env(2, "game.seat_taken", {"seat": 5, "name": "x"})], "seat 5 cannot be taken"),
        (opening()[:1] + [Env(2, "game.paused", {})], "unknown service event 'game.paused'"),
        (opening() + [Env(7, "teleported", {})], "cannot fold 'teleported'"),
        (opening() + [Env(8, "dealt", {"seat": 0, "card": 1})], "expected version 7, got 8"),
        (opening() + [Env(8, "game.finished", {})], "expected version 7, got 8"),
        (opening()[:1] + [Env(3, "game.seat_taken", {"seat": 0, "name": "x"})], "expected version 2, got 3"),
        (FINISHED + [Env(len(FINISHED) + 1, "dealt", {})], "'dealt' after 'game.finished'"),
        (opening()[:2] + [Env(3, "game.seat_taken", {"seat": 0, "name": "eve"})], "seat 0 cannot be taken"),
    ],
)
def test_a_broken_stream_is_a_projection_error(stream, message):
    with pytest.raises(ProjectionError, match=message):
        GameProjection.fold("g1", TINY, stream)


# --- whose clocks run ---------------------------------------------------------------------------


def _castle_panic(state: object, runs: str, bots: tuple[str | None, ...] = (None, None, None)) -> GameProjection:
    features = Features(clock={"per_move_ms": 30_000}, clock_runs=runs)
    return GameProjection(game_id="g", engine=ENGINE, status=Status.ACTIVE, seats=3, names=("a", "b", "c"),
                          bots=bots, features=features, state=state)


def test_every_human_seat_that_owes_an_answer_runs_its_clock_and_a_turn_rule_game_paused():
    """Castle Panic's discards owed by seats 0 and 2 during seat 1's turn: both clocks run (a bot
    seat's never does); a trade offer to seat 2 runs seat 2's; a game recorded by the old turn
    rule paused every clock for both, as its players saw."""
    turn = position(seats=3, phase="trade", seat=1, hands={0: ["archer_red#1"], 1: ["knight_red#1"], 2: ["tar#1"]})
    discards = replace(turn, pending=replace(turn.pending, discards=frozenset({0, 2})))
    offer = replace(turn, turn=replace(turn.turn, trade=Trade(proposer=1, to=2, give="knight_red#1", take="tar#1")))
    assert _castle_panic(turn, OWING).clock_runners(turn) == (1,)
    assert _castle_panic(discards, OWING).clock_runners(discards) == (0, 2)
    assert _castle_panic(discards, OWING, bots=(None, None, "heuristic")).clock_runners(discards) == (0,)
    assert _castle_panic(offer, OWING).clock_runners(offer) == (2,)
    assert _castle_panic(turn, TURN).clock_runners(turn) == (1,)
    assert _castle_panic(discards, TURN).clock_runners(discards) == ()
    assert _castle_panic(offer, TURN).clock_runners(offer) == ()
