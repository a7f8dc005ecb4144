"""``service.play.features.parse_features``: ``POST /games``'s clock, delay, undo and on_timeout,
taken in seconds (fractions too) and kept in whole milliseconds."""

from __future__ import annotations

import math

import pytest

from service.errors import ServiceError
from service.play.features import MAX_CLOCK_S, parse_features


def test_fractional_seconds_are_kept_to_the_millisecond():
    fischer = parse_features({"clock": {"initial_s": 0.5, "increment_s": 2.5}}, cooperative=False)
    assert fischer.clock == {"initial_ms": 500, "increment_ms": 2_500}
    assert parse_features({"clock": {"per_move_s": 0.1}}, cooperative=False).clock == {"per_move_ms": 100}
    assert parse_features({"spectator_delay": {"seconds": 1.5}}, cooperative=False).spectator_delay == {"ms": 1_500}
    assert parse_features({"clock": {"per_move_s": 1.2344}}, cooperative=False).clock == {"per_move_ms": 1_234}
    assert parse_features({"clock": {"per_move_s": 1.2346}}, cooperative=False).clock == {"per_move_ms": 1_235}


def test_whole_seconds_and_the_defaults():
    assert parse_features({"clock": {"initial_s": 60}}, cooperative=False).clock == {
        "initial_ms": 60_000, "increment_ms": 0
    }
    assert parse_features({"clock": {"per_move_s": MAX_CLOCK_S}}, cooperative=False).clock == {
        "per_move_ms": MAX_CLOCK_S * 1000
    }
    chosen = parse_features({}, cooperative=True)
    assert (chosen.clock, chosen.on_timeout, chosen.undo, chosen.spectator_delay) == (None, "bot", True, None)


@pytest.mark.parametrize(
    "body",
    [
        {"clock": {"per_move_s": 0.09}},
        {"clock": {"initial_s": 0}},
        {"clock": {"initial_s": 60, "increment_s": -0.5}},
        {"clock": {"per_move_s": MAX_CLOCK_S + 0.5}},
        {"clock": {"per_move_s": math.nan}},
        {"clock": {"per_move_s": math.inf}},
        {"clock": {"per_move_s": True}},
        {"clock": {"per_move_s": "30"}},
        {"spectator_delay": {"versions": 1.5}},
        {"spectator_delay": {"versions": 2.0}},
        {"spectator_delay": {"seconds": -0.001}},
        {"undo": 1.0},
        {"on_timeout": 0.5},
    ],
)
def test_a_bad_number_is_bad_options_naming_the_field(body):
    with pytest.raises(ServiceError) as refused:
        parse_features(body, cooperative=False)
    assert refused.value.code == "bad_options"
    assert next(iter(body)) in refused.value.message
