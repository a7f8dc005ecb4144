"""Components, setup and options."""

from __future__ import annotations

from collections import Counter

import pytest

from games import find_engine
from games.base import BadOptions, fold
from games.castle_panic import ENGINE
from games.castle_panic.data import (
    ALL_CARDS,
    ALL_TOKENS,
    CARD_KINDS,
    TOKEN_KINDS,
    CardCategory,
    TokenCategory,
    kind_of,
    opposite,
    step,
)
from games.castle_panic.state import Monster, Phase
from service.fairness.draw_schemes import LegacyRandom


def _start(seats: int, **options: bool):
    return fold(ENGINE, ENGINE.setup(options, seats, LegacyRandom(7)))


def test_there_are_49_castle_cards_with_the_rulebook_counts() -> None:
    counts = Counter(kind_of(card) for card in ALL_CARDS)
    assert len(ALL_CARDS) == 49
    assert counts["archer_red"] == counts["knight_green"] == counts["swordsman_blue"] == 3
    assert counts["archer_any"] == counts["hero_blue"] == counts["barbarian"] == 1
    assert counts["brick"] == counts["mortar"] == 4
    assert sum(k.count for k in CARD_KINDS.values() if k.category is CardCategory.HIT) == 33


def test_there_are_49_monster_tokens_with_the_rulebook_counts() -> None:
    counts = Counter(kind_of(token) for token in ALL_TOKENS)
    assert len(ALL_TOKENS) == 49
    assert (counts["goblin"], counts["orc"], counts["troll"]) == (6, 11, 10)
    assert counts["giant_boulder"] == 4
    assert sum(k.count for k in TOKEN_KINDS.values() if k.category is TokenCategory.BOSS) == 4
    assert sum(k.count for k in TOKEN_KINDS.values() if k.category is TokenCategory.EFFECT) == 18
    assert [TOKEN_KINDS[b].hp for b in ("goblin_king", "orc_warlord", "troll_mage", "healer")] == [2, 3, 3, 2]


def test_opposite_arcs_and_clockwise_steps() -> None:
    assert [opposite(a) for a in range(1, 7)] == [4, 5, 6, 1, 2, 3]
    assert step(6, 1) == 1 and step(1, -1) == 6 and step(3, 1) == 4


def test_monster_notation_round_trips() -> None:
    for text in ("troll#2@K3:2", "goblin#1@F6:1", "orc_warlord#1@C1:3"):
        assert Monster.parse(text).notation() == text
        assert eval(repr(Monster.parse(text))) == Monster.parse(text)
    assert Monster.parse("orc#4@S5") == Monster("orc#4", "orc", 1, 5, 2, 2)
    for bad in ("troll#2", "giant_boulder#1@F1", "troll#2@X3", "troll#99@K1", "troll#2@K7"):
        with pytest.raises(ValueError):
            Monster.parse(bad)


def test_setup_places_towers_walls_and_one_setup_monster_per_archer_arc() -> None:
    state = _start(4)
    assert state.board.towers == state.board.walls == {1, 2, 3, 4, 5, 6}
    assert sorted(m.arc for m in state.board.monsters) == [1, 2, 3, 4, 5, 6]
    assert {m.ring for m in state.board.monsters} == {3}
    assert sorted(m.kind for m in state.board.monsters) == ["goblin"] * 3 + ["orc"] * 2 + ["troll"]
    assert all(m.hp == m.max_hp for m in state.board.monsters)
    assert len(state.tokens.pile) == 43


@pytest.mark.parametrize(("seats", "hand"), [(1, 6), (2, 6), (3, 5), (4, 5), (5, 5), (6, 4)])
def test_hands_are_dealt_by_player_count_and_the_first_turn_draws_nothing(seats: int, hand: int) -> None:
    events = ENGINE.setup({}, seats, LegacyRandom(3))
    state = fold(ENGINE, events)
    assert [len(h) for h in state.cards.hands] == [hand] * seats
    assert len(state.cards.deck) == 49 - hand * seats
    assert [e.payload["reason"] for e in events if e.type == "cards_drawn"] == ["deal"] * seats
    assert (state.turn.number, state.turn.seat, state.turn.phase) == (1, 0, Phase.DISCARD)


def test_solitaire_discards_twice_and_trades_never() -> None:
    state = _start(1)
    assert (state.config.discard_limit, state.config.trades_per_turn) == (2, 0)
    assert (_start(6).config.trades_per_turn, _start(5).config.trades_per_turn) == (2, 1)


def test_under_construction_starts_without_walls() -> None:
    assert _start(2, under_construction=True).board.walls == frozenset()


def test_easier_battles_takes_the_listed_tokens_out_of_the_game() -> None:
    state = _start(2, easier_battles=True)
    removed = Counter(kind_of(t) for t in state.tokens.removed)
    assert removed == Counter(
        {
            "draw_4": 1,
            "orc_warlord": 1,
            "troll_mage": 1,
            "plague_swordsmen": 1,
            "plague_knights": 1,
            "move_red": 1,
            "move_green": 1,
            "move_blue": 1,
            "giant_boulder": 3,
        }
    )
    assert len(state.tokens.pile) == 43 - 11


def test_overlord_is_the_last_seat_with_three_hidden_tokens_and_no_cards() -> None:
    state = _start(3, overlord=True)
    assert state.config.overlord == 2 and state.config.castle_seats == (0, 1)
    assert len(state.tokens.overlord_hand) == 3 and state.cards.hands[2] == ()
    assert [len(h) for h in state.cards.hands[:2]] == [6, 6]


def test_my_home_spreads_the_claimed_towers_and_names_a_kings_tower() -> None:
    state = _start(3, my_home_is_my_castle=True)
    assert state.house.claims == ((1, 0), (3, 1), (5, 2))
    assert state.house.kings_tower == 2
    assert _start(6, my_home_is_my_castle=True).house.kings_tower is None


def test_normalize_options_fills_defaults_and_names_bad_options() -> None:
    assert ENGINE.normalize_options({}, 2) == {
        "master_slayer": True,
        "overlord": False,
        "easier_battles": False,
        "all_for_one": False,
        "heroic_powers": False,
        "my_home_is_my_castle": False,
        "dwindling_resources": False,
        "under_construction": False,
        "hidden_hands": False,
        "boss_moves_self": False,
    }
    with pytest.raises(BadOptions, match="'nope'"):
        ENGINE.normalize_options({"nope": True}, 2)
    with pytest.raises(BadOptions, match="'overlord'"):
        ENGINE.normalize_options({"overlord": True}, 1)
    with pytest.raises(BadOptions, match="'tar'"):
        ENGINE.normalize_options({"hidden_hands": "tar"}, 2)
    with pytest.raises(BadOptions, match=r"^castle_panic takes 1 to 6 players, got 7$"):
        ENGINE.normalize_options({}, 7)


def test_catalog_entry_lists_every_option() -> None:
    entry = ENGINE.catalog_entry()
    assert (entry["id"], entry["min_seats"], entry["max_seats"]) == ("castle_panic", 1, 6)
    assert set(entry["options"]) == set(ENGINE.normalize_options({}, 2))
    assert entry["secret_options"] == [] and len(entry["notes"]) == 3
    assert entry["options"]["master_slayer"] == {
        "type": "bool",
        "default": True,
        "description": entry["options"]["master_slayer"]["description"],
        "label": "Master Slayer",
    }
    assert all(spec["label"] and "_" not in spec["label"] for spec in entry["options"].values())
    assert find_engine("castle_panic") is ENGINE
