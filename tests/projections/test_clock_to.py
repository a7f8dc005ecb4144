"""``projections.lifecycle.clock_to``: each way a turn clock moves, with the figures written out."""

from __future__ import annotations

from projections.lifecycle import Clock, Features, clock_to

FISCHER = Features(clock={"initial_ms": 60_000, "increment_ms": 5_000})
PER_MOVE = Features(clock={"per_move_ms": 20_000})


def test_the_same_seat_running_on_is_charged_the_time_since():
    assert clock_to(Clock((60_000, 60_000), 0, 1_000), FISCHER, 0, 4_000) == Clock((57_000, 60_000), 0, 4_000)


def test_a_clock_never_goes_below_zero():
    assert clock_to(Clock((60_000, 2_000), 1, 1_000), FISCHER, 1, 9_000) == Clock((60_000, 0), 1, 9_000)


def test_nothing_changed_gives_the_same_clock_and_a_paused_clock_moves_its_since():
    clock = Clock((60_000, 50_000), 0, 1_000)
    assert clock_to(clock, FISCHER, 0, 1_000) is clock
    assert clock_to(Clock((60_000, 50_000), None, 1_000), FISCHER, None, 3_000) == Clock((60_000, 50_000), None, 3_000)


def test_a_stopped_clock_gets_the_increment_except_at_the_end():
    clock = Clock((60_000, 60_000), 0, 1_000)
    assert clock_to(clock, FISCHER, 1, 3_000) == Clock((63_000, 60_000), 1, 3_000)
    assert clock_to(clock, FISCHER, None, 3_000, over=True) == Clock((58_000, 60_000), None, 3_000)


def test_a_per_move_clock_starts_its_new_runner_at_the_full_allowance():
    assert clock_to(Clock((20_000, 3_000), 0, 1_000), PER_MOVE, 1, 6_000) == Clock((15_000, 20_000), 1, 6_000)
    assert clock_to(Clock((20_000, 3_000), None, 1_000), PER_MOVE, 0, 6_000) == Clock((20_000, 3_000), 0, 6_000)
