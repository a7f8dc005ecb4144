"""Versions and optional rules: Overlord, Master Slayer on/off, the official optional rules."""

from __future__ import annotations

from dataclasses import replace

import pytest

from games.base import IllegalMove
from games.castle_panic.rules import legal_moves, waiting_for
from games.castle_panic.state import Phase
from tests.games.castle_panic.position import Scripted, act, monsters, position, types

OVERLORD = {"overlord": True}


def _overlord_turn(**kwargs):
    """Seat 0 plays the castle, seat 1 is the Overlord, in the middle of the Overlord's turn."""
    return position(seats=2, options=OVERLORD, phase="overlord", **kwargs)


def test_overlord_turn_follows_the_castle_players_play_phase_move_then_draw_up_to_three() -> None:
    state = position(
        seats=2,
        options=OVERLORD,
        monsters=["orc#3@F1"],
        overlord_hand=["troll#5"],
        pile=["goblin#5", "goblin#6", "orc#5"],
    )
    state, _events = act(state, 0, "end_phase", Scripted())
    assert monsters(state) == ["orc#3@A1:2"]
    assert state.turn.phase is Phase.OVERLORD and waiting_for(state) == [1]
    assert len(state.tokens.overlord_hand) == 3 and len(state.tokens.pile) == 1
    assert state.turn.overlord_plays == 2


def test_overlord_places_one_monster_in_a_chosen_arc_and_that_ends_its_plays() -> None:
    state = _overlord_turn(monsters=["orc#3@A1"], overlord_hand=["troll#5", "move_red#1"], pile=["orc#5"])
    legal = legal_moves(state, 1)
    assert {"type": "place_monster", "args": {"token": "troll#5", "arc": 4}} in legal
    assert {"type": "play_token", "args": {"token": "move_red#1"}} in legal
    assert not any(m["type"] == "place_monster" and m["args"]["token"] == "move_red#1" for m in legal)
    state, _events = act(state, 1, "place_monster", token="troll#5", arc=4)
    assert "troll#5@F4:3" in monsters(state)
    # the single chosen placement used the turn: the next castle turn has begun
    assert state.turn.phase is Phase.DISCARD and state.turn.number == 4


def test_overlord_plays_up_to_two_tokens_by_die_roll() -> None:
    hand = ["troll#5", "move_red#1", "goblin#5"]
    state = _overlord_turn(monsters=["orc#3@A1"], overlord_hand=hand, pile=["orc#5"])
    state, _ = act(state, 1, "play_token", Scripted(dice=[6]), token="troll#5")
    assert "troll#5@F6:3" in monsters(state)
    assert [m["type"] for m in legal_moves(state, 1)] == ["play_token", "play_token", "end_phase"]
    state, _ = act(state, 1, "play_token", token="move_red#1")
    assert "orc#3@K1:2" in monsters(state)
    assert state.turn.phase is Phase.DISCARD
    assert state.tokens.overlord_hand == ("goblin#5",)


def test_overlord_draw_3_draws_three_into_the_hand_and_allows_three_more_plays() -> None:
    state = _overlord_turn(monsters=["orc#3@A1"], overlord_hand=["draw_3#1"], pile=["orc#5", "orc#6", "orc#7", "orc#8"])
    state, _events = act(state, 1, "play_token", Scripted(), token="draw_3#1")
    assert len(state.tokens.overlord_hand) == 3 and state.turn.overlord_plays == 4
    assert waiting_for(state) == [1]


def test_missing_makes_the_overlord_skip_its_token_plays_but_monsters_still_move() -> None:
    state = position(
        seats=2,
        options=OVERLORD,
        monsters=["orc#3@F1"],
        hands={0: ["missing#1"]},
        overlord_hand=["troll#5"],
        pile=["orc#5"],
    )
    state, _ = act(state, 0, "play_card", card="missing#1")
    state, _events = act(state, 0, "end_phase")
    assert monsters(state) == ["orc#3@A1:2"]
    assert sorted(state.tokens.overlord_hand) == ["orc#5", "troll#5"]
    assert state.turn.phase is Phase.DISCARD and state.turn.seat == 0


def test_overlord_must_play_when_the_board_is_empty() -> None:
    state = _overlord_turn(overlord_hand=["goblin#5"], pile=["orc#5"])
    assert {"type": "end_phase", "args": {}} not in legal_moves(state, 1)
    with pytest.raises(IllegalMove):
        act(state, 1, "end_phase")


def test_overlord_wins_when_the_last_tower_falls() -> None:
    state = _overlord_turn(monsters=["orc#3@C5"], towers=[1], overlord_hand=["move_counterclockwise#1"])
    state, _ = act(state, 1, "play_token", token="move_counterclockwise#1")
    assert monsters(state) == ["orc#3@C4:2"]
    state = _overlord_turn(monsters=["orc#3@C6"], towers=[1], overlord_hand=["move_clockwise#1"])
    state, _ = act(state, 1, "play_token", token="move_clockwise#1")
    assert state.result is not None and state.result.outcome == "loss"
    from games.castle_panic import ENGINE

    assert ENGINE.summary(state)["winners"] == [1]


def test_co_op_without_master_slayer_discards_slain_monsters_and_names_nobody() -> None:
    state = position(options={"master_slayer": False}, monsters=["goblin#4@A1"], hands={0: ["archer_red#1"]})
    state, _ = act(state, 0, "play_card", card="archer_red#1", target="goblin#4")
    assert state.tokens.trophies == ((),) and "goblin#4" in state.tokens.discard
    assert state.result is not None and state.result.outcome == "win" and state.result.master_slayers == ()


def test_master_slayer_tie_goes_to_most_monsters_slain_then_is_shared() -> None:
    state = position(seats=3, monsters=["goblin#4@A1"], hands={2: ["archer_red#1"]}, seat=2)
    trophies = (("troll#5",), ("goblin#5", "orc#5"), ("orc#6",))
    state = replace(state, tokens=replace(state.tokens, trophies=trophies, discard=tuple(
        t for t in state.tokens.discard if t not in {"troll#5", "goblin#5", "orc#5", "orc#6"})))
    state, events = act(state, 2, "play_card", card="archer_red#1", target="goblin#4")
    assert events[-1].payload["scores"] == [[0, 3, 1], [1, 3, 2], [2, 3, 2]]
    assert state.result.master_slayers == (1, 2)


def test_heroic_powers_let_a_hero_hit_the_castle_ring_of_its_colour() -> None:
    kwargs = {"monsters": ["troll#2@C5", "orc#3@C1"], "towers": [1, 2, 3, 4], "hands": {0: ["hero_blue#1"]}, "pile": ["orc#5"]}
    assert [m for m in legal_moves(position(**kwargs), 0) if m["type"] == "play_card"] == []
    state = position(options={"heroic_powers": True}, **kwargs)
    assert [m["args"]["target"] for m in legal_moves(state, 0) if m["type"] == "play_card"] == ["troll#2"]
    state, _ = act(state, 0, "play_card", card="hero_blue#1", target="troll#2")
    assert "troll#2@C5:2" in monsters(state)


def test_all_for_one_slays_with_an_archer_knight_and_swordsman_of_one_colour() -> None:
    hand = ["archer_green#1", "knight_green#2", "swordsman_any#1", "knight_red#1"]
    kwargs = {"monsters": ["troll#2@A3", "troll#3@K1", "troll#4@F4"], "hands": {0: hand}, "pile": ["orc#5"]}
    state = position(options={"all_for_one": True}, **kwargs)
    afo = [m for m in legal_moves(state, 0) if len(m["args"].get("with", [])) == 2]
    assert afo == [
        {
            "type": "play_card",
            "args": {"card": "archer_green#1", "target": "troll#2", "with": ["knight_green#2", "swordsman_any#1"]},
        }
    ]
    together = {"with": ["knight_green#2", "swordsman_any#1"]}
    with pytest.raises(IllegalMove):  # the option is off
        act(position(**kwargs), 0, "play_card", card="archer_green#1", target="troll#2", **together)
    # decide takes the three cards in any order
    reordered = {"with": ["archer_green#1", "swordsman_any#1"]}
    state, _ = act(state, 0, "play_card", card="knight_green#2", target="troll#2", **reordered)
    assert state.tokens.trophies == (("troll#2",),)


def test_my_home_player_moves_to_a_spare_tower_then_is_out_when_none_is_left() -> None:
    options = {"my_home_is_my_castle": True}
    # two players: seat 0 holds tower 1, seat 1 tower 4; tower 2 is the King's Tower; 3, 5, 6 spares
    walls = [2, 3, 4, 5, 6]
    state = position(seats=2, options=options, monsters=["troll#2@S1", "orc#3@F2"], walls=walls, pile=["orc#5"])
    assert state.house.claims == ((1, 0), (4, 1)) and state.house.kings_tower == 2
    state, events = act(state, 0, "end_phase", Scripted(choices=["orc#5"], dice=[6]))
    assert ("tower_claimed", {"seat": 0, "arc": 3}) in [(e.type, e.payload) for e in events]
    state = position(seats=2, options=options, monsters=["troll#2@S1"], walls=walls, towers=[1, 2, 4], pile=["orc#5"])
    state, events = act(state, 0, "end_phase", Scripted(choices=["orc#5"], dice=[6]))
    assert "player_eliminated" in types(events)
    assert state.house.eliminated == {0} and state.cards.hands[0] == ()
    assert state.turn.seat == 1  # the turn passed on to the survivor


def test_my_home_kings_tower_costs_everyone_a_card_and_a_hand_size() -> None:
    options = {"my_home_is_my_castle": True}
    state = position(
        seats=2, options=options, monsters=["troll#2@S2"], walls=[1, 3, 4, 5, 6],
        hands={0: ["tar#1"], 1: ["brick#1", "mortar#1"]}, pile=["orc#5"],
    )
    state, _events = act(state, 0, "end_phase", Scripted(choices=["orc#5"], dice=[6]))
    assert state.house.hand_size == 5
    assert waiting_for(state) == [0, 1]
    state, _ = act(state, 0, "discard", card="tar#1")
    state, _ = act(state, 1, "discard", Scripted(choices=["orc#5"], dice=[6]), card="brick#1")
    assert "orc#5@F6:2" in monsters(state)


def test_dwindling_resources_removes_a_brick_and_a_mortar_at_each_reshuffle() -> None:
    state = position(
        options={"dwindling_resources": True},
        hands={0: ["draw_2#1"]},
        discard=["brick#2", "mortar#4", "brick#1", "tar#1"],
        deck=[],
        pile=["orc#5"],
        monsters=["orc#3@F1"],
    )
    state, events = act(state, 0, "play_card", Scripted(), card="draw_2#1")
    assert events[1].payload == {"removed": ["brick#1", "mortar#4"]}
    assert {"brick#1", "mortar#4"} <= set(state.cards.removed)
    assert len(state.cards.hands[0]) == 2 and len(state.cards.deck) == 1


def test_a_goblin_king_placed_in_a_chosen_arc_draws_three_tokens_played_by_die_roll() -> None:
    state = _overlord_turn(monsters=["orc#3@A1"], overlord_hand=["goblin_king#1"], pile=["orc#5", "orc#6", "orc#7"])
    state, _ = act(state, 1, "place_monster", token="goblin_king#1", arc=2)
    assert "goblin_king#1@F2:2" in monsters(state)
    assert sorted(state.tokens.overlord_hand) == ["orc#5", "orc#6", "orc#7"]
    assert {m["type"] for m in legal_moves(state, 1)} == {"play_token", "end_phase"}
    assert state.turn.overlord_plays == 3
