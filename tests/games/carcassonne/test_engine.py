"""Commands, rejections, options, draws, views and redaction of the Carcassonne engine."""

from __future__ import annotations

import hashlib
import json

import pytest

from games.base import (
    BadCommand,
    BadOptions,
    GameOver,
    IllegalMove,
    NotYourTurn,
    UnknownCommand,
)
from games.carcassonne import ENGINE
from games.carcassonne.scoring import segment_at
from service.fairness.draw_schemes import LegacyRandom
from tests.games.carcassonne.play import new_game, play_script, send

PLACE = "place_tile"


def place(x, y, rotation):
    return {"type": PLACE, "args": {"x": x, "y": y, "rotation": rotation}}


def follower(at, kind="normal"):
    return {"type": "place_follower", "args": {"at": at, "kind": kind}}


PASS = {"type": "pass", "args": {}}


def test_setup_draws_the_first_tile_for_seat_0():
    game = new_game(3, seed=11)
    started, drawn = game.events
    assert started.type == "game_started" and started.payload["pile"] == 71
    assert started.payload["start"] == {"tile": "D", "x": 0, "y": 0, "rotation": 0}
    assert drawn.type == "tile_drawn" and drawn.payload["seat"] == 0 and drawn.payload["remaining"] == 70
    view = ENGINE.view(game.state, 0)
    assert view["tile"] == drawn.payload["tile"] and view["remaining"] == 70
    assert view["board"] == [{"id": "D", "x": 0, "y": 0, "rotation": 0, "followers": []}]
    assert view["scores"] == [0, 0, 0]
    assert view["supply"] == [{"normal": 7, "large": 0}] * 3
    assert view["phase"] == "place_tile" and view["current"] == 0


def test_legal_placements_of_a_city_cap_next_to_the_start_tile():
    game = new_game(tile_order=["E"])
    legal = sorted((m["args"]["x"], m["args"]["y"], m["args"]["rotation"]) for m in ENGINE.legal_moves(game.state, 0))
    assert legal == [(0, -1, 180), (0, 1, 90), (0, 1, 180), (0, 1, 270)]
    assert ENGINE.legal_moves(game.state, 1) == []


def test_follower_step_lists_one_canonical_port_per_free_segment_and_pass():
    game = new_game(tile_order=["E", "U"])
    send(game, 0, place(0, -1, 180))
    assert ENGINE.legal_moves(game.state, 0) == [follower("S"), follower("N"), PASS]


def test_follower_step_offers_the_large_follower_with_the_expansion():
    game = new_game(tile_order=["V"], inns_cathedrals=True)
    send(game, 0, place(0, 1, 270))
    moves = ENGINE.legal_moves(game.state, 0)
    assert [m["args"]["kind"] for m in moves if m["type"] == "place_follower"].count("large") == 3


def test_farmers_off_removes_field_spots():
    game = new_game(tile_order=["E", "U"], farmers=False)
    send(game, 0, place(0, -1, 180))
    assert ENGINE.legal_moves(game.state, 0) == [follower("S"), PASS]
    with pytest.raises(IllegalMove, match="farmers are off"):
        ENGINE.decide(game.state, 0, follower("N"), LegacyRandom(0))


def test_any_port_of_a_segment_names_it_and_the_event_uses_the_canonical_port():
    game = new_game(tile_order=["V", "U"])
    send(game, 0, place(0, 1, 270))
    events = send(game, 0, follower("Se"))  # Se is the field inside V's curve here
    assert events[0].payload == {"seat": 0, "x": 0, "y": 1, "at": "Es", "kind": "normal"}


@pytest.mark.parametrize("cmd, error", [
    ({"type": "fly", "args": {}}, UnknownCommand),
    ({"args": {}}, BadCommand),
    ("place_tile", BadCommand),
    ({"type": PLACE, "args": {"x": 0, "y": 1}}, BadCommand),
    ({"type": PLACE, "args": {"x": 0, "y": 1, "rotation": 45}}, BadCommand),
    ({"type": PLACE, "args": {"x": True, "y": 1, "rotation": 0}}, BadCommand),
    ({"type": PLACE, "args": {"x": "0", "y": 1, "rotation": 0}}, BadCommand),
    ({"type": PLACE, "args": {"x": 0, "y": 1, "rotation": 0, "z": 1}}, BadCommand),
    (place(0, 0, 0), IllegalMove),
    (place(0, -1, 0), IllegalMove),
    (place(5, 5, 180), IllegalMove),
    (follower("S"), NotYourTurn),
    (PASS, NotYourTurn),
])
def test_bad_commands_are_rejected_with_their_codes(cmd, error):
    game = new_game(tile_order=["E"])
    with pytest.raises(error):
        ENGINE.decide(game.state, 0, cmd, LegacyRandom(0))


def test_other_seat_may_not_act():
    game = new_game(tile_order=["E"])
    with pytest.raises(NotYourTurn) as err:
        ENGINE.decide(game.state, 1, place(0, -1, 180), LegacyRandom(0))
    assert err.value.code == "not_your_turn"


def test_illegal_placement_message_quotes_the_input():
    game = new_game(tile_order=["E"])
    with pytest.raises(IllegalMove, match=r"tile E rotated 0 does not fit at \(0, -1\)"):
        ENGINE.decide(game.state, 0, place(0, -1, 0), LegacyRandom(0))


def test_follower_refusals():
    game = new_game(tile_order=["V", "V"])
    send(game, 0, place(0, 1, 270))
    rng = LegacyRandom(0)
    with pytest.raises(IllegalMove, match="no 'monastery'"):
        ENGINE.decide(game.state, 0, follower("monastery"), rng)
    with pytest.raises(IllegalMove, match="no large follower"):
        ENGINE.decide(game.state, 0, follower("E", "large"), rng)
    with pytest.raises(BadCommand):
        ENGINE.decide(game.state, 0, follower("Middle"), rng)
    with pytest.raises(BadCommand):
        ENGINE.decide(game.state, 0, follower("E", "giant"), rng)
    with pytest.raises(NotYourTurn, match="already placed"):
        ENGINE.decide(game.state, 0, place(1, 1, 0), rng)
    send(game, 0, follower("E"))
    send(game, 1, place(1, 1, 0))
    with pytest.raises(IllegalMove, match="already holds a follower"):
        ENGINE.decide(game.state, 1, follower("W"), rng)


def test_with_no_follower_left_pass_is_the_only_follower_move():
    game = new_game(seed=3)
    empty_seen = False
    while not ENGINE.is_terminal(game.state) and not empty_seen:
        seat = game.state.current
        send(game, seat, ENGINE.legal_moves(game.state, seat)[0])
        moves = ENGINE.legal_moves(game.state, seat)
        if seat == 0 and game.state.supply[0][0] == 0:
            empty_seen = True
            assert moves == [PASS]
            with pytest.raises(IllegalMove, match="no normal follower"):
                ENGINE.decide(game.state, 0, follower("N"), LegacyRandom(0))
        # Seat 0 prefers farmers, which never come back, so its supply runs dry.
        placed = game.state.board.cells[game.state.placed]
        farmers = [m for m in moves if m["type"] == "place_follower"
                   and placed.tile.segments[segment_at(placed, m["args"]["at"])].kind == "field"]
        send(game, seat, (farmers or moves)[0] if seat == 0 else PASS)
    assert empty_seen
    on_board = sum(1 for f in game.state.table.followers() if f.owner == 0)
    assert on_board + game.state.supply[0][0] == 7


def test_unplaceable_tile_is_discarded_and_the_same_seat_draws_again():
    game = new_game(tile_order=["E", "C", "U"])
    send(game, 0, place(0, -1, 180))
    events = send(game, 0, PASS)
    assert [(e.type, e.payload) for e in events[1:]] == [
        ("tile_discarded", {"seat": 1, "tile": "C", "remaining": 1}),
        ("tile_drawn", {"seat": 1, "tile": "U", "remaining": 0}),
    ]
    assert ENGINE.view(game.state, None)["discarded"] == ["C"]


def test_game_ends_when_the_last_tiles_cannot_be_placed():
    game = new_game(tile_order=["E", "C"])
    send(game, 0, place(0, -1, 180))
    events = send(game, 0, follower("N"))
    assert [e.type for e in events] == ["follower_placed", "tile_discarded", "feature_scored", "game_ended"]
    # The farmer's field touches the closed two-tile city: 3 points.
    assert events[-1].payload == {"scores": [3, 0], "winners": [0]}
    assert ENGINE.is_terminal(game.state)
    with pytest.raises(GameOver):
        ENGINE.decide(game.state, 0, PASS, LegacyRandom(0))
    assert ENGINE.summary(game.state) == {"status": "over", "scores": [3, 0], "winners": [0], "turns": 1, "remaining": 0}


def test_random_draws_follow_the_rng_over_the_remaining_multiset():
    a = new_game(seed=5)
    b = new_game(seed=5)
    assert a.events == b.events
    tiles = {new_game(seed=s).state.tile for s in range(30)}
    assert len(tiles) > 5


def test_junction_inn_option_decides_whether_the_west_leg_doubles():
    steps = [("IC-C", 0, (1, 0), "W"), ("W", 0, (-1, 0), None)]
    east = play_script(steps, inns_cathedrals=True)
    both = play_script(steps, inns_cathedrals=True, junction_inn="east_west")
    assert east.state.scores == (3, 0)
    assert both.state.scores == (6, 0)


# --- options ---------------------------------------------------------------------------------


def test_normalize_options_fills_defaults():
    assert ENGINE.normalize_options({}, 2) == {
        "inns_cathedrals": False, "farmers": True, "tiny_city_points": 4, "junction_inn": "east", "tile_order": None,
    }


@pytest.mark.parametrize("options, seats, needle", [
    ({"colour": "red"}, 2, "unknown option"),
    ({}, 6, "2 to 5"),
    ({}, 1, "2 to 5"),
    ({"inns_cathedrals": True}, 7, "2 to 6"),
    ({"farmers": "yes"}, 2, "farmers"),
    ({"tiny_city_points": 3}, 2, "tiny_city_points"),
    ({"junction_inn": "west"}, 2, "junction_inn"),
    ({"tile_order": "ABC"}, 2, "list of tile ids"),
    ({"tile_order": ["D", "D", "D", "D"]}, 2, "more often"),
    ({"tile_order": ["IC-K"]}, 2, "not a tile"),
])
def test_bad_options_are_refused(options, seats, needle):
    with pytest.raises(BadOptions, match=needle):
        ENGINE.normalize_options(options, seats)


def test_six_players_with_the_expansion():
    assert ENGINE.normalize_options({"inns_cathedrals": True, "tile_order": ["IC-K", "IC-K"]}, 6)["tile_order"] == ["IC-K", "IC-K"]


def test_catalog_entry_lists_the_options():
    entry = ENGINE.catalog_entry()
    assert entry["id"] == "carcassonne" and (entry["min_seats"], entry["max_seats"]) == (2, 6)
    assert set(entry["options"]) == {"inns_cathedrals", "farmers", "tiny_city_points", "junction_inn", "tile_order"}
    assert entry["options"]["tiny_city_points"]["choices"] == [4, 2]
    json.dumps(entry)


def test_catalog_entry_names_the_secret_options_and_why():
    entry = ENGINE.catalog_entry()
    assert ENGINE.secret_options == frozenset({"tile_order"})
    assert entry["secret_options"] == ["tile_order"]
    assert entry["notes"] == ["2-5 players; 6 only with inns_cathedrals.",
                              "Option tile_order is secret: keep it out of anything sent to clients."]
    assert entry["options"]["tile_order"]["items"] == "tile ids"


def test_bad_tile_order_lists_every_problem_at_once():
    with pytest.raises(BadOptions) as caught:
        ENGINE.normalize_options({"tile_order": ["D", "ZZ", "D", "D", "D", "IC-K"]}, 2)
    assert caught.value.message == (
        "option 'tile_order' uses 'D' 4 times; the game has 3 (more often than the box holds); "
        "names 'ZZ', which is not a tile of this game; names 'IC-K', which is not a tile of this game")


# --- views and redaction -------------------------------------------------------------------


def test_tile_order_is_committed_but_never_shown():
    order = ["E", "U", "V", "B"]
    game = new_game(tile_order=order)
    started = game.events[0]
    # Salted, so that a short order cannot be found by trying every one against the digest.
    salt = started.payload["secret_salt"]
    digest = hashlib.sha256(f'{salt}:["E","U","V","B"]'.encode()).hexdigest()
    assert len(salt) == 32
    assert started.payload["tile_order"] == order and started.payload["tile_order_sha256"] == digest
    for viewer in (None, 0, 1):
        shown = ENGINE.redact(started, viewer)
        assert shown.payload["tile_order"] is None and shown.payload["tile_order_sha256"] == digest
        assert shown.payload["secret_salt"] is None
        view = ENGINE.view(game.state, viewer)
        assert "tile_order" not in view["options"]
        assert view["remaining_by_tile"] == {"U": 1, "V": 1, "B": 1}
    assert ENGINE.redact(game.events[1], None) == game.events[1]


def test_view_shows_followers_on_the_board_and_spectators_get_no_legal_moves():
    game = new_game(tile_order=["V", "U"])
    send(game, 0, place(0, 1, 270))
    assert ENGINE.view(game.state, 0)["placed"] == {"x": 0, "y": 1}
    send(game, 0, follower("E"))
    view = ENGINE.view(game.state, None)
    assert view["board"][1] == {"id": "V", "x": 0, "y": 1, "rotation": 270,
                                "followers": [{"seat": 0, "at": "E", "kind": "normal"}]}
    assert view["legal"] == [] and view["current"] == 1 and view["tile"] == "U"
    assert view["supply"][0] == {"normal": 6, "large": 0}
    assert ENGINE.view(game.state, 1)["legal"] != []
    json.dumps(view)


def test_not_started_view_and_decide():
    state = ENGINE.initial_state()
    assert ENGINE.view(state, None) == {"game": "carcassonne", "phase": "not_started", "legal": []}
    with pytest.raises(IllegalMove):
        ENGINE.decide(state, 0, PASS, LegacyRandom(0))
