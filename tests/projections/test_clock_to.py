"""``projections.lifecycle.clock_to``: each way a turn clock moves, with the figures written out."""

from __future__ import annotations

from projections.lifecycle import Clock, Features, clock_to

FISCHER = Features(clock={"initial_ms": 60_000, "increment_ms": 5_000})
PER_MOVE = Features(clock={"per_move_ms": 20_000})


def test_the_same_seat_running_on_is_charged_the_time_since():
    assert clock_to(Clock((60_000, 60_000), (0,), 1_000), FISCHER, (0,), 4_000) == Clock((57_000, 60_000), (0,), 4_000)


def test_a_clock_never_goes_below_zero():
    assert clock_to(Clock((60_000, 2_000), (1,), 1_000), FISCHER, (1,), 9_000) == Clock((60_000, 0), (1,), 9_000)


def test_nothing_changed_gives_the_same_clock_and_a_paused_clock_moves_its_since():
    clock = Clock((60_000, 50_000), (0,), 1_000)
    assert clock_to(clock, FISCHER, (0,), 1_000) is clock
    assert clock_to(Clock((60_000, 50_000), (), 1_000), FISCHER, (), 3_000) == Clock((60_000, 50_000), (), 3_000)


def test_a_stopped_clock_gets_the_increment_except_at_the_end():
    clock = Clock((60_000, 60_000), (0,), 1_000)
    assert clock_to(clock, FISCHER, (1,), 3_000) == Clock((63_000, 60_000), (1,), 3_000)
    assert clock_to(clock, FISCHER, (), 3_000, over=True) == Clock((58_000, 60_000), (), 3_000)


def test_a_per_move_clock_starts_its_new_runner_at_the_full_allowance():
    assert clock_to(Clock((20_000, 3_000), (0,), 1_000), PER_MOVE, (1,), 6_000) == Clock((15_000, 20_000), (1,), 6_000)
    assert clock_to(Clock((20_000, 3_000), (), 1_000), PER_MOVE, (0,), 6_000) == Clock((20_000, 3_000), (0,), 6_000)


def test_several_seats_owing_at_once_each_run_their_own_clock():
    """Castle Panic's discards: seats 0 and 2 owe at once; both are charged, seat 1 waits."""
    clock = clock_to(Clock((60_000, 60_000, 60_000), (0,), 1_000), FISCHER, (0, 2), 3_000)
    assert clock == Clock((58_000, 60_000, 60_000), (0, 2), 3_000)
    later = clock_to(clock, FISCHER, (0, 2), 7_000)
    assert later == Clock((54_000, 60_000, 56_000), (0, 2), 7_000)
    # Seat 2 answered: its clock stops (the increment), seat 0's runs on.
    assert clock_to(later, FISCHER, (0,), 8_000) == Clock((53_000, 60_000, 60_000), (0,), 8_000)


def test_the_seat_that_runs_out_first_is_the_one_a_view_shows_running():
    clock = Clock((9_000, 60_000, 4_000), (0, 2), 1_000)
    assert clock.first_out == 2 and clock.deadline == 5_000
    assert clock.as_view() == {
        "remaining_ms": [9_000, 60_000, 4_000], "running": 2, "running_seats": [0, 2], "since": 1_000,
        "deadline": 5_000,
    }
    assert clock.out_of_time(4_999) == [] and clock.out_of_time(10_000) == [2, 0]
    assert Clock((5, 5), (0, 1), 0).out_of_time(5) == [0, 1]  # a tie: the lower seat first
    assert Clock((5, 5), (), 0).as_view()["running"] is None and Clock((5, 5), (), 0).deadline is None


def test_a_new_runner_of_a_per_move_clock_starts_full_while_one_running_on_keeps_its_time():
    clock = clock_to(Clock((20_000, 20_000, 20_000), (0,), 0), PER_MOVE, (0, 1), 5_000)
    assert clock == Clock((15_000, 20_000, 20_000), (0, 1), 5_000)
