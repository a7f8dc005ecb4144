"""The random and heuristic bots."""

from __future__ import annotations

import pytest

from games.castle_panic.bots import (
    BOTS,
    HEURISTIC,
    RANDOM,
    choose,
    heuristic_choose,
    random_choose,
)
from games.castle_panic.rules import legal_moves
from service.fairness.draw_schemes import LegacyRandom
from tests.games.castle_panic.position import act, position


def test_the_heuristic_bot_hits_the_monster_closest_to_a_tower_first() -> None:
    state = position(
        monsters=["orc#3@A1", "orc#4@S2:1"],
        hands={0: ["archer_red#1", "swordsman_red#1"]},
        pile=["goblin#5"],
    )
    move = HEURISTIC.choose(state, 0, LegacyRandom(1))
    assert move == {"type": "play_card", "args": {"card": "swordsman_red#1", "target": "orc#4"}}


def test_the_heuristic_bot_rebuilds_the_wall_in_front_of_a_standing_tower() -> None:
    state = position(
        monsters=["troll#2@K3"],
        walls=[1, 2, 4, 5],
        towers=[1, 2, 3, 4, 5],
        hands={0: ["brick#1", "mortar#1"]},
        pile=["goblin#5"],
    )
    assert HEURISTIC.choose(state, 0, LegacyRandom(1)) == {
        "type": "play_card",
        "args": {"card": "brick#1", "target": 3, "with": ["mortar#1"]},
    }


def test_the_heuristic_bot_lets_the_wall_kill_the_weakest_attacker() -> None:
    state = position(monsters=["orc#3@K2", "goblin#4@K2", "troll#2@A5"], pile=["troll_mage#1", "orc#5"])
    from tests.games.castle_panic.position import Scripted

    state, _ = act(state, 0, "end_phase", Scripted(choices=["troll_mage#1"], dice=[4]))
    assert HEURISTIC.choose(state, 0, LegacyRandom(1)) == {"type": "assign_damage", "args": {"monster": "goblin#4"}}


def test_the_heuristic_bot_ends_the_phase_when_no_card_helps() -> None:
    state = position(monsters=["orc#3@F1"], hands={0: ["archer_blue#1"]}, pile=["goblin#5"])
    assert HEURISTIC.choose(state, 0, LegacyRandom(1)) == {"type": "end_phase", "args": {}}


def test_both_bots_only_choose_legal_commands() -> None:
    state = position(seats=2, phase="trade", hands={0: ["brick#1", "tar#1"], 1: ["mortar#1"]}, monsters=["orc#3@S1"])
    for bot in BOTS.values():
        for seed in range(10):
            assert bot.choose(state, 0, LegacyRandom(seed)) in legal_moves(state, 0)
    assert random_choose(state, 0, LegacyRandom(3)) in legal_moves(state, 0)
    assert heuristic_choose(state, 0, LegacyRandom(3)) == choose(state, 0, LegacyRandom(3))
    assert RANDOM.name == "random" and HEURISTIC.name == "heuristic"


def test_both_bots_refuse_a_seat_that_owes_nothing() -> None:
    state = position(seats=2, hands={0: ["tar#1"], 1: ["brick#1"]}, monsters=["orc#3@F1"], pile=["orc#5"])
    for bot in (RANDOM, HEURISTIC):
        with pytest.raises(ValueError, match=r"^seat 1 has no legal move$"):
            bot.choose(state, 1, LegacyRandom(1))


def test_the_bots_are_named_as_the_service_seats_them() -> None:
    assert {name: bot.name for name, bot in BOTS.items()} == {"random": "random", "heuristic": "heuristic"}
