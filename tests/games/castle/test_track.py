"""The wall track: laps, corner towers taken by landing exactly, Falcon gates and 'Halt!'."""

from __future__ import annotations

from games.castle import ENGINE
from games.castle.track import Marker, Wall

PLAIN = Wall.from_track(ENGINE.dataset.track, with_gates=False)
GATES = Wall.from_track(ENGINE.dataset.track, with_gates=True)


def test_landing_exactly_on_either_tower_space_finds_the_tower():
    assert PLAIN.advance(Marker(10), 2).tower == 1
    assert PLAIN.advance(Marker(10), 3).tower == 1
    assert PLAIN.advance(Marker(10), 4).tower is None


def test_passing_over_a_tower_finds_nothing():
    step = PLAIN.advance(Marker(10), 5)
    assert (step.end, step.tower) == (Marker(15), None)


def test_scores_above_99_go_round_again_and_keep_the_total():
    step = PLAIN.advance(Marker(97), 15)
    assert step.end == Marker(112)
    assert (step.end.space(), step.end.lap()) == (12, 1)
    assert step.tower == 1


def test_tower_zero_one_is_found_but_holds_nothing():
    assert PLAIN.advance(Marker(95), 5).tower == 0


def test_plain_gates_are_skipped_without_counting():
    step = GATES.advance(Marker(25), 5)
    assert (step.end, step.lost) == (Marker(30), 0)


def test_halt_variant_stops_at_the_gate_and_loses_the_rest():
    step = GATES.advance(Marker(25), 5, halt_at_gates=True)
    assert (step.end, step.lost, step.gained, step.tower) == (Marker(27, gate=27), 3, 2, None)


def test_halt_variant_marker_on_27_reaching_the_gate_gains_nothing():
    step = GATES.advance(Marker(27), 4, halt_at_gates=True)
    assert (step.end, step.lost) == (Marker(27, gate=27), 4)


def test_halt_variant_next_score_leaves_the_gate_to_the_number_after_it():
    step = GATES.advance(Marker(27, gate=27), 3, halt_at_gates=True)
    assert (step.end, step.lost) == (Marker(30), 0)


def test_halt_variant_stops_at_the_next_gate_after_leaving_one():
    step = GATES.advance(Marker(27, gate=27), 30, halt_at_gates=True)
    assert (step.end, step.lost) == (Marker(47, gate=47), 10)


def test_halt_variant_works_on_the_second_lap():
    step = GATES.advance(Marker(120), 10, halt_at_gates=True)
    assert (step.end, step.lost) == (Marker(127, gate=27), 3)


def test_halt_variant_crosses_gate_91_92_then_wraps():
    assert GATES.advance(Marker(95), 10, halt_at_gates=True).end == Marker(105)
    assert GATES.advance(Marker(90), 10, halt_at_gates=True).end == Marker(91, gate=91)
