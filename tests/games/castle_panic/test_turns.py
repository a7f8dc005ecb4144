"""Turn phases, trading, castle cards and the rejection codes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from games.base import BadCommand, GameOver, IllegalMove, NotYourTurn, UnknownCommand
from games.castle_panic import ENGINE
from games.castle_panic.rules import MAX_PROPOSALS, legal_moves, waiting_for
from games.castle_panic.state import Phase
from tests.games.castle_panic.position import Scripted, act, monsters, position, types

END = {"type": "end_phase", "args": {}}


def test_discard_and_draw_once_then_the_turn_moves_on_to_trading() -> None:
    state = position(seats=2, phase="discard", hands={0: ["brick#1", "tar#1"], 1: ["mortar#1"]}, monsters=["orc#3@F1"])
    assert legal_moves(state, 0) == [
        {"type": "discard_and_draw", "args": {"card": "brick#1"}},
        {"type": "discard_and_draw", "args": {"card": "tar#1"}},
        END,
    ]
    assert legal_moves(state, 1) == []
    state, events = act(state, 0, "discard_and_draw", Scripted(), card="brick#1")
    assert types(events) == ["cards_discarded", "cards_drawn", "phase_changed"]
    assert state.turn.phase is Phase.TRADE
    assert len(state.cards.hands[0]) == 2 and state.cards.discard == ("brick#1",)


def test_solitaire_may_discard_and_draw_twice() -> None:
    state = position(phase="discard", hands={0: ["brick#1", "tar#1", "missing#1"]}, monsters=["orc#3@F1"])
    state, _ = act(state, 0, "discard_and_draw", card="brick#1")
    assert state.turn.phase is Phase.DISCARD
    state, _ = act(state, 0, "discard_and_draw", card="tar#1")
    # solitaire has no trading: straight on to playing cards
    assert state.turn.phase is Phase.PLAY
    assert state.cards.discard == ("brick#1", "tar#1")


def test_a_trade_needs_the_other_seat_to_accept() -> None:
    hands = {0: ["brick#1", "tar#1"], 1: ["mortar#1"], 2: []}
    state = position(seats=3, phase="trade", hands=hands, monsters=["orc#3@F1"])
    assert legal_moves(state, 0) == [
        {"type": "propose_trade", "args": {"to": 1, "give": "brick#1", "take": "mortar#1"}},
        {"type": "propose_trade", "args": {"to": 1, "give": "tar#1", "take": "mortar#1"}},
        END,
    ]
    with pytest.raises(IllegalMove):
        act(state, 0, "propose_trade", to=2, give="brick#1", take="mortar#1")
    state, _ = act(state, 0, "propose_trade", to=1, give="tar#1", take="mortar#1")
    assert waiting_for(state) == [1]
    assert legal_moves(state, 1) == [{"type": "accept_trade", "args": {}}, {"type": "decline_trade", "args": {}}]
    assert legal_moves(state, 0) == [{"type": "cancel_trade", "args": {}}]
    with pytest.raises(NotYourTurn):
        act(state, 0, "accept_trade")
    with pytest.raises(NotYourTurn):
        act(state, 2, "decline_trade")
    state, events = act(state, 1, "accept_trade")
    assert types(events) == ["cards_traded", "phase_changed"]
    assert state.cards.hands[:2] == (("brick#1", "mortar#1"), ("tar#1",))
    assert state.turn.phase is Phase.PLAY


def test_a_seat_whose_time_runs_out_on_a_trade_offer_declines_it_and_nothing_else() -> None:
    """``timeout_answer``: the offer to seat 1 is declined for it; the proposer, a third seat and
    any owed discard or move of a turn get ``None`` (the game's ``on_timeout`` decides those)."""
    hands = {0: ["brick#1", "tar#1"], 1: ["mortar#1"], 2: ["archer_red#1"]}
    state = position(seats=3, phase="trade", hands=hands, monsters=["orc#3@F1"])
    assert [ENGINE.timeout_answer(state, seat) for seat in range(3)] == [None, None, None]
    offered, _ = act(state, 0, "propose_trade", to=1, give="tar#1", take="mortar#1")
    assert ENGINE.timeout_answer(offered, 1) == {"type": "decline_trade", "args": {}}
    assert ENGINE.timeout_answer(offered, 0) is None and ENGINE.timeout_answer(offered, 2) is None
    declined, events = act(offered, 1, "decline_trade")
    assert types(events) == ["trade_declined"] and declined.turn.trade is None
    discards = replace(offered, pending=replace(offered.pending, discards=frozenset({1})))
    assert ENGINE.timeout_answer(discards, 1) is None  # the discard comes first, and is owed


def test_declined_proposals_are_bounded_per_turn() -> None:
    hands = {0: ["brick#1"], 1: ["mortar#1"]}
    state = position(seats=2, phase="trade", hands=hands, monsters=["orc#3@F1"])
    for _ in range(MAX_PROPOSALS):
        state, _ = act(state, 0, "propose_trade", to=1, give="brick#1", take="mortar#1")
        state, _ = act(state, 1, "decline_trade")
    assert state.turn.phase is Phase.PLAY
    assert state.cards.hands == (("brick#1",), ("mortar#1",))


def test_six_players_trade_twice_per_turn() -> None:
    hands = {0: ["brick#1", "brick#2"], 1: ["mortar#1", "mortar#2"], 2: ["tar#1"]}
    state = position(seats=6, phase="trade", hands=hands, monsters=["orc#3@F1"])
    state, _ = act(state, 0, "propose_trade", to=1, give="brick#1", take="mortar#1")
    state, _ = act(state, 1, "accept_trade")
    assert state.turn.phase is Phase.TRADE
    state, _ = act(state, 0, "propose_trade", to=2, give="brick#2", take="tar#1")
    state, _ = act(state, 2, "accept_trade")
    assert state.turn.phase is Phase.PLAY
    assert state.cards.hands[0] == ("mortar#1", "tar#1")


def test_hidden_hands_trade_lets_the_other_seat_pick_its_card() -> None:
    hands = {0: ["brick#1"], 1: ["mortar#1", "tar#1"]}
    state = position(seats=2, options={"hidden_hands": True}, phase="trade", hands=hands, monsters=["orc#3@F1"])
    assert legal_moves(state, 0) == [{"type": "propose_trade", "args": {"to": 1, "give": "brick#1"}}, END]
    state, _ = act(state, 0, "propose_trade", to=1, give="brick#1")
    assert legal_moves(state, 1) == [
        {"type": "accept_trade", "args": {"card": "mortar#1"}},
        {"type": "accept_trade", "args": {"card": "tar#1"}},
        {"type": "decline_trade", "args": {}},
    ]
    state, _ = act(state, 1, "accept_trade", card="tar#1")
    assert state.cards.hands == (("tar#1",), ("mortar#1", "brick#1"))


def test_brick_and_mortar_rebuild_a_wall_only_where_none_stands() -> None:
    state = position(walls=[1, 2, 3, 4, 5], towers=[1, 2, 3, 4, 5], hands={0: ["brick#2", "mortar#3"]}, pile=["orc#5"])
    assert [m for m in legal_moves(state, 0) if m["type"] == "play_card"] == [
        {"type": "play_card", "args": {"card": "brick#2", "target": 6, "with": ["mortar#3"]}}
    ]
    with pytest.raises(IllegalMove):
        act(state, 0, "play_card", card="brick#2", target=2, **{"with": ["mortar#3"]})
    with pytest.raises(IllegalMove):
        act(state, 0, "play_card", card="brick#2", target=6)
    state, events = act(state, 0, "play_card", card="mortar#3", target=6, **{"with": ["brick#2"]})
    assert state.board.walls == {1, 2, 3, 4, 5, 6}
    assert types(events) == ["card_played", "wall_built"]


def test_fortify_goes_on_a_standing_unfortified_wall_while_tokens_last() -> None:
    state = position(walls=[2, 3], fortified=[2], hands={0: ["fortify_wall#1"]}, pile=["orc#5"])
    assert [m["args"]["target"] for m in legal_moves(state, 0) if m["type"] == "play_card"] == [3]
    state, _ = act(state, 0, "play_card", card="fortify_wall#1", target=3)
    assert state.board.fortified == {2, 3}


def test_hit_cards_need_the_right_ring_and_colour_and_never_reach_forest_or_castle() -> None:
    state = position(
        monsters=["orc#3@A1", "orc#4@A3", "orc#5@F1", "orc#6@C1", "orc#7@K2"],
        towers=[2, 3, 4, 5, 6],
        hands={0: ["archer_red#1", "archer_any#1", "hero_red#1", "barbarian#1"]},
        pile=["goblin#5"],
    )
    targets: dict[Any, Any] = {}
    for move in legal_moves(state, 0):
        if move["type"] == "play_card":
            targets.setdefault(move["args"]["card"], []).append(move["args"]["target"])
    assert targets == {
        "archer_red#1": ["orc#3"],
        "archer_any#1": ["orc#3", "orc#4"],
        "hero_red#1": ["orc#3", "orc#7"],
        "barbarian#1": ["orc#3", "orc#4", "orc#6", "orc#7"],
    }
    state, _ = act(state, 0, "play_card", card="archer_red#1", target="orc#3")
    assert "orc#3@A1:1" in monsters(state)


def test_draw_2_reshuffles_the_discards_when_the_deck_is_empty() -> None:
    state = position(hands={0: ["draw_2#1"]}, discard=["tar#1"], deck=[], pile=["orc#5"], monsters=["orc#3@F1"])
    state, events = act(state, 0, "play_card", card="draw_2#1")
    assert types(events) == ["card_played", "deck_reshuffled", "cards_drawn"]
    assert sorted(state.cards.hands[0]) == ["draw_2#1", "tar#1"]
    assert state.cards.deck == () and state.cards.discard == ()
    # nothing left to draw: Draw 2 cannot be played again (it would loop on itself)
    assert [m for m in legal_moves(state, 0) if m["args"].get("card") == "draw_2#1"] == []


def test_rejections_carry_stable_codes_and_quote_the_input() -> None:
    state = position(seats=2, hands={0: ["tar#1"], 1: ["brick#1"]}, monsters=["orc#3@F1"], pile=["orc#5"])
    with pytest.raises(UnknownCommand, match="'fly'"):
        act(state, 0, "fly")
    with pytest.raises(NotYourTurn):
        act(state, 1, "end_phase")
    with pytest.raises(BadCommand, match="'target'"):
        act(state, 0, "play_card", card="tar#1", target=3)
    with pytest.raises(IllegalMove, match="'brick#1'"):
        act(state, 0, "play_card", card="brick#1", target=3)
    with pytest.raises(IllegalMove, match="'orc#9'"):
        act(state, 0, "play_card", card="tar#1", target="orc#9")
    with pytest.raises(IllegalMove):
        act(state, 0, "discard_and_draw", card="tar#1")
    with pytest.raises(NotYourTurn):
        act(state, 0, "discard", card="tar#1")
    lost = position(monsters=["goblin#4@C1"], towers=[2])
    lost, _ = act(lost, 0, "end_phase")
    with pytest.raises(GameOver):
        act(lost, 0, "end_phase")
    assert legal_moves(lost, 0) == []


def test_a_malformed_command_envelope_is_a_bad_command() -> None:
    """The envelope is checked by ``games.base.parse_command``: its shared messages and codes."""
    state = position(hands={0: ["tar#1"]}, monsters=["orc#3@F1"], pile=["orc#5"])
    with pytest.raises(BadCommand, match=r"^a command is \{'type': str, 'args': \{\.\.\.\}\}, got 'end_phase'$"):
        ENGINE.decide(state, 0, "end_phase", Scripted())  # type: ignore[arg-type]  # the wrong type is the test
    with pytest.raises(BadCommand, match=r"^a command is .*, got \{'args': \{\}\}$"):
        ENGINE.decide(state, 0, {"args": {}}, Scripted())
    with pytest.raises(BadCommand, match=r"^args of 'end_phase' must be an object \(leave it out for none\), got \[\]$"):
        ENGINE.decide(state, 0, {"type": "end_phase", "args": []}, Scripted())
    assert ENGINE.decide(state, 0, {"type": "end_phase"}, Scripted()) == ENGINE.decide(state, 0, END, Scripted())


def test_end_phase_walks_through_the_phases_and_play_ends_the_turn() -> None:
    hands = {0: ["tar#1"], 1: ["brick#1"]}
    state = position(seats=2, phase="discard", hands=hands, monsters=["orc#3@F1"], pile=["orc#5"])
    state, _ = act(state, 0, "end_phase")
    assert state.turn.phase is Phase.TRADE
    state, _ = act(state, 0, "end_phase")
    assert state.turn.phase is Phase.PLAY
    state, _events = act(state, 0, "end_phase", Scripted(choices=["orc#5"], dice=[3]))
    assert (state.turn.seat, state.turn.phase) == (1, Phase.DISCARD)
    assert monsters(state) == ["orc#3@A1:2", "orc#5@F3:2"]
    assert len(state.cards.hands[1]) == 6  # drew up at the start of its turn
