"""Views and redaction: what each viewer may see, decided in one place."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.game import GameProjection
from projections.views import event_for, events_for, view_for, visibility_classes
from service.fairness.draw_schemes import LegacyRandom
from tests.projections.helpers import Env, opening, random_game
from tests.tinygame import TINY


def test_before_the_start_every_view_is_empty_with_no_legal_moves():
    projection = GameProjection.fold("g1", TINY, opening()[:3])  # seats full, setup not folded yet
    assert view_for(projection, None) == {"legal": []}
    assert view_for(projection, 0) == {"legal": []}


def test_the_acting_seat_gets_its_legal_moves_and_hand_spectators_neither():
    projection = GameProjection.fold("g1", TINY, opening())
    seat0, seat1, spectator = view_for(projection, 0), view_for(projection, 1), view_for(projection, None)
    assert seat0["legal"][0] == {"type": "draw", "args": {}}
    assert seat1["legal"] == []
    assert spectator["legal"] == [] and "hand" not in spectator
    assert len(seat0["hand"]) == 1 and len(seat1["hand"]) == 1


def test_a_finished_game_offers_nothing_to_anyone():
    projection = GameProjection.fold("g1", TINY, random_game(LegacyRandom(1)))
    assert all(view_for(projection, viewer)["legal"] == [] for viewer in visibility_classes(projection))


def test_service_events_show_only_their_public_fields():
    created = Env(1, "game.created", {"game": "tiny", "options": {}, "seats": 2, "seed_commitment": "ab", "secret": 1})
    seat = Env(2, "game.seat_taken", {"seat": 0, "name": "ann", "token_hash": "xyz"}, actor=0, ts=5)
    assert event_for(TINY, created, None)["payload"] == {"game": "tiny", "options": {}, "seats": 2, "seed_commitment": "ab"}
    assert event_for(TINY, seat, 1) == {
        "version": 2, "type": "game.seat_taken", "payload": {"seat": 0, "name": "ann"}, "actor": 0, "ts": 5
    }
    bot = Env(3, "game.seat_taken", {"seat": 1, "name": "first bot", "bot": "first"})
    assert event_for(TINY, bot, None)["payload"] == {"seat": 1, "name": "first bot", "bot": "first"}


def test_a_card_is_shown_to_its_owner_only():
    drew = Env(9, "drew", {"seat": 0, "card": 3}, actor=0)
    assert event_for(TINY, drew, 0)["payload"] == {"seat": 0, "card": 3}
    assert event_for(TINY, drew, 1)["payload"] == {"seat": 0}
    assert event_for(TINY, drew, None)["payload"] == {"seat": 0}


def test_the_command_and_hashes_of_an_envelope_never_leave():
    env = Env(9, "passed", {"seat": 1}, actor=1, command={"type": "pass", "args": {}})
    assert set(event_for(TINY, env, 1) or ()) == {"version", "type", "payload", "actor", "ts"}


@settings(deadline=None, max_examples=40)
@given(st.integers(min_value=0, max_value=10_000))
def test_no_viewer_ever_sees_another_seats_card(seed):
    envs = random_game(LegacyRandom(seed))
    for viewer in (None, 0, 1):
        for event in events_for(TINY, envs, viewer):
            if event["type"] in ("dealt", "drew") and event["payload"]["seat"] != viewer:
                assert "card" not in event["payload"]
