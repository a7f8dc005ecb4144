"""Worked scenarios from exact positions (the issue's list), each checked to the last hit point.

Monsters are written ``token@<ring><arc>:<hp>`` with rings C S K A F (Castle ... Forest). Ending
the play phase moves every monster one step before the monster draws, so the positions below
start one step out from where the interesting part happens.
"""

from __future__ import annotations

import pytest

from games.base import IllegalMove
from games.castle_panic.rules import legal_moves, waiting_for
from games.castle_panic.state import DamageChoice, Phase
from tests.games.castle_panic.position import Scripted, act, monsters, position, types


def test_giant_boulder_stops_at_a_fortified_wall_and_the_wall_stands() -> None:
    state = position(
        monsters=["goblin#4@F2", "orc#3@A2", "troll#2@K2", "troll#3@S3"],
        fortified=[2],
        pile=["giant_boulder#1", "goblin#5"],
    )
    rng = Scripted(choices=["giant_boulder#1", "goblin#5"], dice=[2, 5])
    state, events = act(state, 0, "end_phase", rng)
    # phase 5 moved the arc-2 column one ring in and troll#3 broke wall 3; then the boulder
    # rolled in at arc 2 and killed the whole column up to the fortified wall.
    assert monsters(state) == ["goblin#5@F5:1", "troll#3@S3:2"]
    assert state.board.walls == {1, 2, 4, 5, 6}
    assert state.board.fortified == frozenset()
    assert state.board.towers == {1, 2, 3, 4, 5, 6}
    slain = [
        (e.payload["monster"], e.payload["cause"], e.payload["trophy"]) for e in events if e.type == "monster_slain"
    ]
    assert slain == [
        ("goblin#4", "giant_boulder", False),
        ("orc#3", "giant_boulder", False),
        ("troll#2", "giant_boulder", False),
    ]
    assert {"giant_boulder#1", "goblin#4", "orc#3", "troll#2"} <= set(state.tokens.discard)
    assert state.tokens.trophies == ((),)


def test_giant_boulder_rolls_through_an_empty_castle_and_out_of_the_opposite_arc() -> None:
    state = position(
        monsters=["orc#3@F1", "goblin#4@C6", "goblin#5@S1", "troll#2@S4", "orc#4@A4", "troll#3@K5"],
        walls=[2, 3, 5, 6],
        towers=[2, 3, 5, 6],
        pile=["giant_boulder#1"],
    )
    rng = Scripted(choices=["giant_boulder#1"], dice=[1])
    state, events = act(state, 0, "end_phase", rng)
    # after phase 5: orc#3@A1, goblin#4 and goblin#5 in C1, troll#2@C4, orc#4@K4, troll#3@S5
    slain = [e.payload["monster"] for e in events if e.type == "monster_slain"]
    assert slain == ["orc#3", "goblin#4", "goblin#5", "troll#2", "orc#4"]
    assert monsters(state) == ["troll#3@S5:3"]
    assert state.board.walls == {2, 3, 5, 6}
    assert state.board.towers == {2, 3, 5, 6}
    assert state.result is None


def test_giant_boulder_from_inside_breaks_the_opposite_wall_and_stops() -> None:
    state = position(
        monsters=["goblin#4@C6", "orc#3@K4", "troll#3@K5"],
        walls=[2, 3, 4, 5, 6],
        towers=[2, 3, 5, 6],
        pile=["giant_boulder#1"],
    )
    rng = Scripted(choices=["giant_boulder#1"], dice=[1])
    state, events = act(state, 0, "end_phase", rng)
    # goblin#4 circled into C1 and dies there; the boulder breaks wall 4 from the inside and stops,
    # so orc#3, now in the Swordsman space behind that wall, lives.
    assert [e.payload["monster"] for e in events if e.type == "monster_slain"] == ["goblin#4"]
    assert monsters(state) == ["orc#3@S4:2", "troll#3@S5:3"]
    assert state.board.walls == {2, 3, 5, 6}


def test_giant_boulder_destroys_the_first_tower_it_meets_and_stops() -> None:
    state = position(monsters=["troll#3@K5"], walls=[1, 2, 4, 5, 6], pile=["giant_boulder#1"])
    state, events = act(state, 0, "end_phase", Scripted(choices=["giant_boulder#1"], dice=[3]))
    assert state.board.towers == {1, 2, 4, 5, 6}
    assert state.board.walls == {1, 2, 4, 5, 6}
    assert "monster_slain" not in types(events)


def test_troll_mage_moves_a_stack_into_a_wall_and_the_player_picks_who_is_hurt() -> None:
    state = position(
        monsters=["orc#3@K2", "goblin#4@K2", "troll#2@A5"],
        pile=["troll_mage#1", "orc#5"],
    )
    rng = Scripted(choices=["troll_mage#1", "orc#5"], dice=[4, 6])
    state, _events = act(state, 0, "end_phase", rng)
    # phase 5 put the stack in S2; the mage, placed in F4, moves every other monster one ring in:
    # the stack attacks wall 2 (wall gone, both stopped) and troll#2 goes from K5 to S5.
    assert monsters(state) == ["goblin#4@S2:1", "orc#3@S2:2", "troll#2@S5:3", "troll_mage#1@F4:3"]
    assert state.board.walls == {1, 3, 4, 5, 6}
    assert state.pending.damage == (DamageChoice(0, 2, "wall", ("orc#3", "goblin#4")),)
    assert waiting_for(state) == [0]
    assert legal_moves(state, 0) == [
        {"type": "assign_damage", "args": {"monster": "orc#3"}},
        {"type": "assign_damage", "args": {"monster": "goblin#4"}},
    ]
    state, _events = act(state, 0, "assign_damage", rng, monster="goblin#4")
    assert monsters(state) == ["orc#3@S2:2", "orc#5@F6:2", "troll#2@S5:3", "troll_mage#1@F4:3"]
    assert "goblin#4" in state.tokens.discard
    assert state.turn.number == 4 and state.turn.phase is Phase.DISCARD


def test_troll_mage_moves_itself_too_with_boss_moves_self() -> None:
    state = position(options={"boss_moves_self": True}, monsters=["orc#3@A2"], pile=["troll_mage#1"])
    state, _ = act(state, 0, "end_phase", Scripted(choices=["troll_mage#1"], dice=[4]))
    assert monsters(state) == ["orc#3@S2:2", "troll_mage#1@A4:3"]


def test_nice_shot_with_a_hero_slays_a_full_strength_troll() -> None:
    state = position(
        monsters=["troll#2@K3", "orc#3@K1"],
        hands={0: ["hero_green#1", "nice_shot#1"]},
        pile=["goblin#5"],
    )
    plays = [m for m in legal_moves(state, 0) if m["type"] == "play_card"]
    assert plays == [
        {"type": "play_card", "args": {"card": "hero_green#1", "target": "troll#2"}},
        {"type": "play_card", "args": {"card": "hero_green#1", "target": "troll#2", "with": ["nice_shot#1"]}},
    ]
    with pytest.raises(IllegalMove):
        act(state, 0, "play_card", card="hero_green#1", target="orc#3", **{"with": ["nice_shot#1"]})
    with pytest.raises(IllegalMove):
        act(state, 0, "play_card", card="nice_shot#1", target="troll#2")
    state, _events = act(state, 0, "play_card", card="hero_green#1", target="troll#2", **{"with": ["nice_shot#1"]})
    assert monsters(state) == ["orc#3@K1:2"]
    assert state.tokens.trophies == (("troll#2",),)
    assert state.cards.discard == ("hero_green#1", "nice_shot#1")
    assert state.cards.hands == ((),)


def test_nice_shot_card_order_does_not_matter_to_decide() -> None:
    state = position(monsters=["troll#2@K3"], hands={0: ["hero_green#1", "nice_shot#1"]}, pile=["goblin#5"])
    state, _ = act(state, 0, "play_card", card="nice_shot#1", target="troll#2", **{"with": ["hero_green#1"]})
    assert state.tokens.trophies == (("troll#2",),)


def test_tar_holds_a_monster_through_the_move_phase_and_a_colour_move() -> None:
    state = position(
        monsters=["orc#3@S1", "goblin#4@K2", "troll#2@K3"],
        hands={0: ["tar#1"]},
        pile=["move_red#1"],
    )
    state, _ = act(state, 0, "play_card", card="tar#1", target="orc#3")
    assert state.board.tar == "orc#3"
    state, events = act(state, 0, "end_phase", Scripted(choices=["move_red#1"]))
    # orc#3 never touched wall 1; goblin#4 went K2 -> S2 in phase 5, then into wall 2 on the
    # red move and died of it; troll#2 is green and only moved in phase 5.
    assert monsters(state) == ["orc#3@S1:2", "troll#2@S3:3"]
    assert state.board.walls == {1, 3, 4, 5, 6}
    assert [e.payload["monster"] for e in events if e.type == "monster_slain"] == ["goblin#4"]
    # the next turn began: the tar token is gone
    assert state.turn.number == 4
    assert state.board.tar is None


def test_scavenge_takes_a_played_card_back_and_it_is_played_again() -> None:
    state = position(
        monsters=["troll#2@S1", "orc#3@C4"],
        towers=[1, 2, 3, 5, 6],
        hands={0: ["barbarian#1", "scavenge#1"]},
        pile=["goblin#5"],
    )
    state, _ = act(state, 0, "play_card", card="barbarian#1", target="troll#2")
    assert {"type": "play_card", "args": {"card": "scavenge#1", "target": "barbarian#1"}} in legal_moves(state, 0)
    state, _ = act(state, 0, "play_card", card="scavenge#1", target="barbarian#1")
    assert state.cards.hands == (("barbarian#1",),)
    assert state.cards.discard == ("scavenge#1",)
    state, _ = act(state, 0, "play_card", card="barbarian#1", target="orc#3")
    assert monsters(state) == []
    assert state.tokens.trophies == (("troll#2", "orc#3"),)
    assert state.cards.discard == ("scavenge#1", "barbarian#1")
    assert state.result is None  # a token is still in the pile


def test_drive_him_back_sends_a_castle_ring_monster_to_its_forest_space_untouched() -> None:
    state = position(
        monsters=["troll#2@C3:2"],
        towers=[1, 2, 5, 6],
        fortified=[3],
        hands={0: ["drive_him_back#1"]},
    )
    state, events = act(state, 0, "play_card", card="drive_him_back#1", target="troll#2")
    assert monsters(state) == ["troll#2@F3:2"]
    assert state.board.walls == {1, 2, 3, 4, 5, 6}
    assert state.board.fortified == {3}
    assert types(events) == ["card_played", "monsters_moved"]
    state, _ = act(state, 0, "end_phase")
    assert monsters(state) == ["troll#2@A3:2"]


def test_the_last_monster_dying_as_it_destroys_the_last_tower_is_a_loss() -> None:
    state = position(monsters=["goblin#4@C1"], towers=[2])
    state, events = act(state, 0, "end_phase")
    assert state.board.towers == frozenset()
    assert state.result is not None
    assert (state.result.outcome, state.result.reason) == ("loss", "towers_destroyed")
    assert types(events)[-2:] == ["tower_destroyed", "game_ended"]
    assert state.turn.phase is Phase.OVER


def test_slaying_the_last_monster_with_the_pile_empty_wins_and_names_the_master_slayer() -> None:
    state = position(monsters=["goblin#4@A1"], hands={0: ["archer_red#1"]})
    state, events = act(state, 0, "play_card", card="archer_red#1", target="goblin#4")
    assert state.result is not None
    assert (state.result.outcome, state.result.reason) == ("win", "monsters_defeated")
    assert state.result.master_slayers == (0,)
    assert events[-1].payload["scores"] == [[0, 1, 1]]
