"""Per-viewer views, event redaction and the summary."""

from __future__ import annotations

import json

from games.base import SPECTATOR, Event, fold
from games.castle_panic import ENGINE
from service.fairness.draw_schemes import LegacyRandom
from tests.games.castle_panic.position import act, position


def test_hands_are_open_to_everyone_in_the_base_game() -> None:
    state = position(seats=2, hands={0: ["tar#1"], 1: ["brick#1"]}, monsters=["orc#3@F1"], pile=["orc#5"])
    for viewer in (SPECTATOR, 0, 1):
        assert ENGINE.view(state, viewer)["hands"] == [["tar#1"], ["brick#1"]]


def test_hidden_hands_show_each_seat_only_its_own_hand() -> None:
    state = position(
        seats=2, options={"hidden_hands": True}, hands={0: ["tar#1"], 1: ["brick#1", "mortar#1"]}, monsters=["orc#3@F1"]
    )
    assert ENGINE.view(state, 0)["hands"] == [["tar#1"], None]
    assert ENGINE.view(state, 1)["hands"] == [None, ["brick#1", "mortar#1"]]
    assert ENGINE.view(state, SPECTATOR)["hands"] == [None, None]
    assert ENGINE.view(state, SPECTATOR)["hand_counts"] == [1, 2]


def test_the_view_never_lists_the_deck_or_the_monster_pile() -> None:
    state = fold(ENGINE, ENGINE.setup({}, 3, LegacyRandom(5)))
    text = json.dumps(ENGINE.view(state, 0))
    assert all(f'"{card}"' not in text for card in state.cards.deck)
    assert all(f'"{token}"' not in text for token in state.tokens.pile)
    view = ENGINE.view(state, 0)
    assert (view["deck_size"], view["monster_pile_size"]) == (34, 43)


def test_the_overlord_hand_is_shown_to_the_overlord_only() -> None:
    events = ENGINE.setup({"overlord": True}, 3, LegacyRandom(5))
    state = fold(ENGINE, events)
    hand = list(state.tokens.overlord_hand)
    assert ENGINE.view(state, 2)["overlord_hand"] == hand
    for viewer in (SPECTATOR, 0, 1):
        view = ENGINE.view(state, viewer)
        assert "overlord_hand" not in view and view["overlord_hand_size"] == 3
    drew = next(e for e in events if e.type == "overlord_drew")
    assert ENGINE.redact(drew, 2) == drew
    assert ENGINE.redact(drew, 0) == Event("overlord_drew", {"seat": 2, "count": 3, "plays": 0})
    assert ENGINE.redact(drew, SPECTATOR) == Event("overlord_drew", {"seat": 2, "count": 3, "plays": 0})


def test_hidden_hands_draws_are_redacted_to_a_count_for_everyone_else() -> None:
    events = ENGINE.setup({"hidden_hands": True}, 2, LegacyRandom(5))
    deal = next(e for e in events if e.type == "cards_drawn" and e.payload["seat"] == 1)
    assert ENGINE.redact(deal, 1) == deal
    assert ENGINE.redact(deal, 0) == Event("cards_drawn", {"seat": 1, "count": 6, "reason": "deal", "hidden": True})
    open_deal = next(e for e in ENGINE.setup({}, 2, LegacyRandom(5)) if e.type == "cards_drawn")
    assert ENGINE.redact(open_deal, 1) == open_deal


def test_a_hidden_hands_trade_shows_its_cards_to_the_two_parties_only() -> None:
    hands = {0: ["brick#1"], 1: ["mortar#1"], 2: ["tar#1"]}
    state = position(seats=3, options={"hidden_hands": True}, phase="trade", hands=hands, monsters=["orc#3@F1"])
    state, events = act(state, 0, "propose_trade", to=1, give="brick#1")
    assert ENGINE.view(state, 1)["trade"] == {"from": 0, "to": 1, "give": "brick#1", "take": None}
    assert ENGINE.view(state, 2)["trade"] == {"from": 0, "to": 1}
    assert ENGINE.redact(events[0], 2) == Event("trade_proposed", {"from": 0, "to": 1, "hidden": True})
    state, events = act(state, 1, "accept_trade", card="mortar#1")
    assert ENGINE.redact(events[0], 2).payload == {"from": 0, "to": 1, "hidden": True}
    assert ENGINE.redact(events[0], 0) == events[0]


def test_the_view_carries_the_board_the_phase_and_the_viewers_legal_moves() -> None:
    hands = {0: ["hero_green#1"]}
    state = position(monsters=["troll#2@K3:2"], fortified=[4], tar="troll#2", hands=hands, pile=["orc#5"])
    view = ENGINE.view(state, 0)
    assert view["board"]["monsters"] == [
        {"id": "troll#2", "kind": "troll", "ring": 2, "ring_name": "knight", "arc": 3, "colour": "green",
         "hp": 2, "max_hp": 3, "tarred": True}
    ]
    assert (view["board"]["fortified"], view["board"]["fortify_tokens_left"]) == ([4], 1)
    assert (view["phase"], view["active"], view["waiting_for"]) == ("play", 0, [0])
    assert view["legal"] == ENGINE.legal_moves(state, 0)
    assert ENGINE.view(state, SPECTATOR)["legal"] == []


def test_summary_reports_status_and_outcome() -> None:
    state = position(monsters=["goblin#4@A1"], hands={0: ["archer_red#1"]})
    assert ENGINE.summary(state) == {
        "status": "active", "turn": 3, "towers": 6, "monster_pile": 0, "monsters_on_board": 1
    }
    state, _ = act(state, 0, "play_card", card="archer_red#1", target="goblin#4")
    summary = ENGINE.summary(state)
    assert (summary["status"], summary["outcome"], summary["winners"], summary["master_slayers"]) == (
        "finished", "win", [0], [0]
    )
    assert ENGINE.is_terminal(state)
    assert ENGINE.summary(ENGINE.initial_state()) == {"status": "open"}
