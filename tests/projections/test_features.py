"""``projections.lifecycle.Features``: what ``game.created`` records of the service features, in
whole milliseconds, and the games recorded in whole seconds before, which fold the same."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import games
from projections.game import GameProjection
from projections.lifecycle import OWING, TURN, Features, in_ms
from tests.projections.test_fold_runs import fields_of, random_game

ENGINES = games.default_engines()


def test_a_created_payload_in_milliseconds_is_read_as_it_is():
    features = Features.of_created(
        {"clock": {"initial_ms": 500, "increment_ms": 2_500}, "spectator_delay": {"ms": 1_500}}
    )
    assert (features.initial_ms, features.increment_ms, features.per_move_ms) == (500, 2_500, None)
    assert features.delay_ms == 1_500
    assert Features.of_created({"clock": {"per_move_ms": 100}}).initial_ms == 100


def test_a_created_payload_of_whole_seconds_reads_as_the_same_milliseconds():
    legacy = Features.of_created(
        {"clock": {"initial_s": 60, "increment_s": 5}, "spectator_delay": {"seconds": 10}, "undo": False}
    )
    assert legacy == Features(clock={"initial_ms": 60_000, "increment_ms": 5_000}, spectator_delay={"ms": 10_000},
                              undo=False, clock_runs=TURN)
    assert Features.of_created({"clock": {"per_move_s": 30}}).per_move_ms == 30_000
    assert Features.of_created({"spectator_delay": {"versions": 5}}).spectator_delay == {"versions": 5}
    assert Features.of_created({}) == Features()  # a game from before the features


def test_a_clock_records_whose_clocks_run_and_a_game_recorded_before_runs_the_turn_rule():
    assert Features(clock={"per_move_ms": 100}).as_payload()["clock"] == {"per_move_ms": 100, "runs": OWING}
    assert Features.of_created({"clock": {"per_move_ms": 100, "runs": OWING}}).clock_runs == OWING
    assert Features.of_created({"clock": {"per_move_ms": 100, "runs": OWING}}).clock == {"per_move_ms": 100}
    assert Features.of_created({"clock": {"per_move_s": 1}}).clock_runs == TURN
    assert Features().as_payload()["clock"] is None


def test_in_ms_leaves_versions_and_millisecond_keys_alone():
    assert in_ms({"versions": 3}) == {"versions": 3}
    assert in_ms({"initial_ms": 1, "increment_ms": 0}) == {"initial_ms": 1, "increment_ms": 0}
    assert in_ms(None) is None


def _as_recorded_before(clock: dict[str, Any]) -> dict[str, int]:
    """A clock as games recorded it before: whole seconds, and no ``runs`` (the turn rule)."""
    return {name.replace("_ms", "_s"): value // 1000 for name, value in clock.items() if name != "runs"}


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_a_game_recorded_in_whole_seconds_folds_exactly_as_it_did(name: str) -> None:
    """The same log with ``game.created``'s clock written the old way (``{"initial_s": 60,
    "increment_s": 5}``, no ``runs``) folds, at every version, to the very projection of the new
    way with ``"runs": "turn"``."""
    engine, clocked = ENGINES[name], 0
    for seed in range(16):
        envelopes = random_game(name, seed)
        created = envelopes[0]
        clock = created.payload["clock"]
        if clock is None or clock["runs"] != TURN:
            continue
        clocked += 1
        old = dataclasses.replace(created, payload={**created.payload, "clock": _as_recorded_before(clock)})
        now = then = GameProjection.empty(f"{name}-{seed}", engine)
        for new_envelope, old_envelope in zip(envelopes, [old, *envelopes[1:]]):
            now, then = now.apply(new_envelope), then.apply(old_envelope)
            assert fields_of(then) == fields_of(now)
    assert clocked >= 2
