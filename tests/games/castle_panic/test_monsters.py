"""Monster movement, walls and towers, and every monster token's effect."""

from __future__ import annotations

from games.castle_panic.rules import legal_moves, waiting_for
from games.castle_panic.state import Phase
from tests.games.castle_panic.position import Scripted, act, monsters, position, types


def test_a_monster_attacking_a_wall_breaks_it_takes_one_damage_and_stays() -> None:
    state = position(monsters=["troll#2@S2", "orc#3@F5"], pile=["goblin#5"])
    state, _events = act(state, 0, "end_phase", Scripted(choices=["goblin#5"], dice=[4]))
    assert monsters(state) == ["goblin#5@F4:1", "orc#3@A5:2", "troll#2@S2:2"]
    assert state.board.walls == {1, 3, 4, 5, 6}
    assert state.board.towers == {1, 2, 3, 4, 5, 6}


def test_a_fortified_wall_loses_its_token_instead_and_still_stops_the_monster() -> None:
    state = position(monsters=["troll#2@S2"], fortified=[2, 5], pile=["goblin#5"])
    state, _ = act(state, 0, "end_phase", Scripted(choices=["goblin#5"], dice=[1]))
    assert monsters(state) == ["goblin#5@F1:1", "troll#2@S2:2"]
    assert state.board.walls == {1, 2, 3, 4, 5, 6}
    assert state.board.fortified == {5}


def test_a_monster_entering_a_tower_space_destroys_it_takes_one_damage_and_stays() -> None:
    state = position(monsters=["troll#2@S2"], walls=[1, 3, 4, 5, 6], pile=["goblin#5"])
    state, _ = act(state, 0, "end_phase", Scripted(choices=["goblin#5"], dice=[1]))
    assert monsters(state) == ["goblin#5@F1:1", "troll#2@C2:2"]
    assert state.board.towers == {1, 3, 4, 5, 6}


def test_castle_ring_monsters_circle_clockwise_into_the_next_tower() -> None:
    state = position(monsters=["orc#3@C2", "troll#2@C4"], towers=[1, 3, 4, 6], pile=["goblin#5"])
    state, _ = act(state, 0, "end_phase", Scripted(choices=["goblin#5"], dice=[1]))
    # orc#3 enters C3 and its tower (now 1 hp left); troll#2 walks into empty C5
    assert monsters(state) == ["goblin#5@F1:1", "orc#3@C3:1", "troll#2@C5:3"]
    assert state.board.towers == {1, 4, 6}


def test_monsters_from_two_directions_share_one_tower_hit_chosen_by_the_player() -> None:
    state = position(monsters=["orc#3@C2", "troll#2@S3"], walls=[1, 2, 4, 5, 6], pile=["goblin#5"])
    state, _ = act(state, 0, "end_phase")
    assert state.board.towers == {1, 2, 4, 5, 6}
    assert [(c.arc, c.structure, c.candidates) for c in state.pending.damage] == [(3, "tower", ("orc#3", "troll#2"))]
    state, _ = act(state, 0, "assign_damage", Scripted(choices=["goblin#5"], dice=[1]), monster="troll#2")
    assert monsters(state) == ["goblin#5@F1:1", "orc#3@C3:2", "troll#2@C3:2"]


def test_identical_monsters_hitting_a_wall_need_no_choice() -> None:
    state = position(monsters=["goblin#4@S1", "goblin#5@S1"], pile=["orc#5"])
    state, events = act(state, 0, "end_phase", Scripted(choices=["orc#5"], dice=[6]))
    assert "damage_pending" not in types(events)
    assert monsters(state) == ["goblin#5@S1:1", "orc#5@F6:2"]
    assert state.board.walls == {2, 3, 4, 5, 6}


def test_colour_move_moves_only_that_colours_monsters_castle_ring_included() -> None:
    state = position(
        monsters=["orc#3@F3", "orc#4@A5", "troll#2@C4"],
        towers=[1, 2, 3, 4, 6],
        pile=["move_green#1"],
    )
    state, _ = act(state, 0, "end_phase", Scripted(choices=["move_green#1"]))
    # phase 5: orc#3 A3, orc#4 K5, troll#2 C5 (no tower); green move: orc#3 K3 only
    assert monsters(state) == ["orc#3@K3:2", "orc#4@K5:2", "troll#2@C5:3"]


def test_clockwise_and_counterclockwise_tokens_move_every_ring_sideways() -> None:
    state = position(monsters=["orc#3@F3", "goblin#4@C6"], towers=[2, 3, 4], pile=["move_clockwise#1"])
    state, _ = act(state, 0, "end_phase", Scripted(choices=["move_clockwise#1"]))
    # phase 5: orc#3 A3, goblin#4 C1; clockwise: orc#3 A4, goblin#4 C2 into the tower there and dies
    assert monsters(state) == ["orc#3@A4:2"]
    assert state.board.towers == {3, 4}
    state = position(monsters=["orc#3@F1"], pile=["move_counterclockwise#1"])
    state, _ = act(state, 0, "end_phase", Scripted(choices=["move_counterclockwise#1"]))
    assert monsters(state) == ["orc#3@A6:2"]


def test_goblin_king_draws_three_more_after_the_remaining_original_token() -> None:
    pile = ["goblin_king#1", "orc#5", "goblin#5", "goblin#6", "troll#5", "troll#6"]
    rng = Scripted(choices=pile[:5], dice=[1, 2, 3, 4, 5])
    state, events = act(position(pile=pile, monsters=["troll#2@F1"]), 0, "end_phase", rng)
    placed = [(e.payload["monster"], e.payload["arc"]) for e in events if e.type == "monster_placed"]
    assert placed == [("goblin_king#1", 1), ("orc#5", 2), ("goblin#5", 3), ("goblin#6", 4), ("troll#5", 5)]
    assert state.tokens.pile == ("troll#6",)


def test_draw_4_queues_four_more_draws() -> None:
    pile = ["draw_4#1", "goblin#4", "goblin#5", "goblin#6", "orc#5", "orc#6", "orc#7"]
    state, events = act(position(pile=pile, monsters=["troll#2@F1"]), 0, "end_phase", Scripted(choices=pile[:6]))
    assert [e.payload["monster"] for e in events if e.type == "monster_placed"] == pile[1:6]
    assert state.tokens.pile == ("orc#7",)


def test_orc_warlord_moves_the_monsters_of_his_colour_but_not_himself() -> None:
    state = position(monsters=["orc#3@A5", "orc#4@A6", "orc#5@A1"], pile=["orc_warlord#1"])
    state, _ = act(state, 0, "end_phase", Scripted(choices=["orc_warlord#1"], dice=[6]))
    # phase 5: all to the Knight ring; warlord in F6 (blue): blue orcs go on to the Swordsman ring
    assert monsters(state) == ["orc#3@S5:2", "orc#4@S6:2", "orc#5@K1:2", "orc_warlord#1@F6:3"]


def test_healer_heals_every_damaged_monster_by_one() -> None:
    state = position(monsters=["troll#2@F3:1", "orc#3@F4:1", "goblin#4@F5:1"], pile=["healer#1"])
    state, _ = act(state, 0, "end_phase", Scripted(choices=["healer#1"], dice=[1]))
    assert monsters(state) == ["goblin#4@A5:1", "healer#1@F1:2", "orc#3@A4:2", "troll#2@A3:2"]


def test_plague_discards_every_players_archers_any_colour_included_but_not_heroes() -> None:
    hands = {0: ["archer_red#1", "archer_any#1", "hero_red#1"], 1: ["archer_blue#2", "knight_red#1"]}
    state = position(seats=2, hands=hands, monsters=["troll#2@F1"], pile=["plague_archers#1"])
    state, events = act(state, 0, "end_phase", Scripted(choices=["plague_archers#1"]))
    lost = [(e.payload["seat"], e.payload["cards"]) for e in events if e.type == "cards_discarded"]
    assert lost == [(0, ["archer_red#1", "archer_any#1"]), (1, ["archer_blue#2"])]
    # seat 1's turn has begun and drew up to 6; the card it kept comes first
    assert state.turn.seat == 1 and state.cards.hands[1][0] == "knight_red#1"
    assert "hero_red#1" in state.cards.hands[0]


def test_all_players_discard_waits_for_every_seat_with_cards_and_legal_shows_what_each_owes() -> None:
    hands = {0: ["brick#1"], 1: ["tar#1", "missing#1"], 2: []}
    state = position(seats=3, hands=hands, monsters=["troll#2@F1"], pile=["all_discard_1#1", "goblin#5"])
    rng = Scripted(choices=["all_discard_1#1", "goblin#5"], dice=[2])
    state, _ = act(state, 0, "end_phase", rng)
    assert waiting_for(state) == [0, 1]
    assert legal_moves(state, 0) == [{"type": "discard", "args": {"card": "brick#1"}}]
    assert legal_moves(state, 1) == [
        {"type": "discard", "args": {"card": "tar#1"}},
        {"type": "discard", "args": {"card": "missing#1"}},
    ]
    assert legal_moves(state, 2) == []
    state, events = act(state, 1, "discard", rng, card="missing#1")
    assert events[-1].type == "cards_discarded" and waiting_for(state) == [0]
    state, events = act(state, 0, "discard", rng, card="brick#1")
    # the second token resolves only once everyone has discarded
    assert "monster_placed" in types(events)
    assert monsters(state) == ["goblin#5@F2:1", "troll#2@A1:3"]
    assert state.cards.discard[-2:] == ("missing#1", "brick#1")


def test_missing_means_no_monster_tokens_are_drawn_this_turn() -> None:
    state = position(monsters=["troll#2@F1"], hands={0: ["missing#1"]}, pile=["orc#5", "orc#6"])
    state, _ = act(state, 0, "play_card", card="missing#1")
    assert {"type": "play_card", "args": {"card": "missing#1"}} not in legal_moves(state, 0)
    state, _events = act(state, 0, "end_phase")
    assert monsters(state) == ["troll#2@A1:3"]
    assert state.tokens.pile == ("orc#5", "orc#6")
    assert state.turn.number == 4 and state.turn.phase is Phase.DISCARD


def test_the_monster_pile_running_out_stops_the_draws() -> None:
    state = position(monsters=["troll#2@F1"], pile=["draw_3#1"])
    state, _events = act(state, 0, "end_phase", Scripted(choices=["draw_3#1"]))
    assert state.tokens.pile == () and state.turn.number == 4
    assert monsters(state) == ["troll#2@A1:3"]


def test_a_giant_boulder_crushes_a_tarred_monster_too() -> None:
    state = position(monsters=["troll#2@S3"], tar="troll#2", hands={}, pile=["giant_boulder#2"])
    state, events = act(state, 0, "end_phase", Scripted(choices=["giant_boulder#2"], dice=[3]))
    assert [e.payload["monster"] for e in events if e.type == "monster_slain"] == ["troll#2"]
    assert state.board.walls == {1, 2, 4, 5, 6} and state.board.tar is None


def test_a_game_still_running_after_the_turn_limit_ends_as_a_loss() -> None:
    from games.castle_panic.rules import MAX_TURNS

    state = position(monsters=["troll#2@F1"], pile=["orc#5"], turn=MAX_TURNS)
    state, _events = act(state, 0, "end_phase", Scripted(choices=["orc#5"], dice=[2]))
    assert (state.result.outcome, state.result.reason) == ("loss", "turn_limit")
