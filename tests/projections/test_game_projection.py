"""The game projection: status, seats, engine state, and refusal of broken streams."""

from __future__ import annotations

import random

import pytest

from projections.game import GameProjection, ProjectionError, Status
from service.draw_schemes import LegacyRandom
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
