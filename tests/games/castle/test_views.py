"""Views: what each seat and a spectator see; the drawn tile is public, the stack is not."""

from __future__ import annotations

import hashlib
import json

from games.base import SPECTATOR, command
from games.castle import ENGINE
from tests.games.castle.helpers import Game


def test_view_shows_the_table_and_the_viewers_legal_moves():
    game = Game(["B01", "B06", "B20"])
    game.turn(2, 0, 0, at="N")
    view = ENGINE.view(game.state, 1)
    assert view["tile"] == "B06" and view["remaining"] == 1 and view["phase"] == "place_tile"
    assert view["board"] == [{"x": 2, "y": 0, "tile": "B01", "rotation": 0, "followers": [
        {"at": "N", "seat": 0, "kind": "normal", "role": "herald", "role_pl": "herold"}]}]
    assert view["seats"][0]["supply"] == {"normal": 5}
    assert view["scores"] == [0, 0]
    assert view["interior"][0] == ".########." and len(view["interior"]) == 8
    assert {"id": "S2", "x": 6, "y": -1, "gate": False} in view["start_spaces"]
    assert view["legal"] and all(m["type"] == "place_tile" for m in view["legal"])
    assert ENGINE.view(game.state, 0)["legal"] == []
    assert ENGINE.view(game.state, SPECTATOR)["legal"] == []
    assert "tile_order" not in view["options"]  # a secret option: not even its length
    assert "B20" not in json.dumps(ENGINE.view(game.state, SPECTATOR))


def test_towers_show_only_whether_a_face_down_wall_tile_lies_there():
    game = Game(["B01"])
    view = ENGINE.view(game.state, SPECTATOR)
    assert view["towers"][:2] == [{"spaces": [0, 1], "wall_tile": False}, {"spaces": [12, 13], "wall_tile": True}]
    assert view["wall_tiles_on_towers"] == 13
    text = json.dumps(view)
    assert not any(f'"{k.name}"' in text for k in ENGINE.dataset.wall_tiles)


def test_scripted_tile_order_is_redacted_from_game_started():
    game = Game(["B01", "B06"])
    stored = game.events[0].payload
    salt = stored["secret_salt"]
    digest = hashlib.sha256(f'{salt}:["B01","B06"]'.encode()).hexdigest()
    assert stored["tile_order"] == ["B01", "B06"] and stored["tile_order_sha256"] == digest
    assert "tile_order" not in stored["options"]
    for viewer in (0, 1, SPECTATOR):
        started = ENGINE.redact(game.events[0], viewer)
        assert started.payload["tile_order"] is None and started.payload["secret_salt"] is None
        assert started.payload["tile_order_sha256"] == digest
        assert "B06" not in json.dumps(started.payload)
    drawn = ENGINE.redact(game.events[1], 1)
    assert drawn == game.events[1]


def test_pending_scoring_choices_are_in_the_view():
    game = Game(["B01", "B13", "B06", "B13", "B06", "B20", "B11"])
    for args in ((2, 0, 0, "N"), (1, 0, 180, None), (1, 1, 0, "N"), (3, 0, 180, "S"), (3, 1, 270, None), (6, 0, 0, None)):
        game.turn(*args[:3], at=args[3])
    game.place(2, 1, 0)
    game.do("pass")
    view = ENGINE.view(game.state, 0)
    assert view["phase"] == "score"
    assert view["pending"] == [
        {"feature": "N", "x": 2, "y": 1, "kind": "path", "tiles": 3, "scorers": [0], "next": True, "doubled": False},
        {"feature": "E", "x": 2, "y": 1, "kind": "path", "tiles": 3, "scorers": [1], "next": False, "doubled": False},
        {"feature": "W", "x": 2, "y": 1, "kind": "path", "tiles": 3, "scorers": [0], "next": True, "doubled": False},
    ]
    assert view["legal"] == [command("score", feature="N"), command("score", feature="W")]


def test_final_view_lists_the_final_scoring_and_winners():
    game = Game(["B19", "B20"])
    game.turn(6, 0, 0, at="N")
    game.turn(7, 0)
    view = ENGINE.view(game.state, SPECTATOR)
    assert view["phase"] == "over" and view["active"] is None
    assert view["winners"] == [0]
    assert [f["item"] for f in view["final"]] == ["court"]
    assert ENGINE.summary(game.state) == {"status": "over", "scores": [6, 0], "winners": [0], "turn": 3, "active": None, "remaining": 0}
