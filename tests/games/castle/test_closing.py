"""Buildings closed from outside: only paths must match, so a house, tower or chapel is often
closed by a tile of another kind (or by the wall) that never joins it. The placing move completes
it all the same, and it scores then, in the order the placer chooses (rules file §5).

Positions are built on the shipped dataset (base board: S2 is the court start space at (6, -1);
Falcon board: at (7, -1)); the rule itself does not depend on the data."""

from __future__ import annotations

import pytest

from games.base import IllegalMove, command
from tests.games.castle.helpers import Game


def scored(game: Game, events) -> list[tuple]:
    return [
        (s["kind"], s["feature"], s["x"], s["y"], s["winners"], s["points"]) for s in game.of("feature_scored", events)
    ]


def test_the_minimal_case_a_court_tile_closes_a_one_tile_house():
    game = Game(["B14", "B20", "B20"])
    game.turn(6, 0, 180, at="S")  # seat 0: a one-tile house open only to the south, a squire on it
    assert game.state.seats[0].followers == 5
    events = game.place(6, 1, 0) + game.do("pass")  # seat 1: the plain court tile below it
    assert game.of("feature_scored", events) == [{
        "seat": 1, "feature": "Se", "x": 6, "y": 0, "kind": "house", "tiles": [[6, 0]], "base": 1,
        "winners": [0], "points": [1, 0], "doubled": [None, None], "aeries": [0, 0],
    }]
    assert game.scores == [1, 0]
    assert game.of("keep_moved", events) == [{"seat": 0, "size": 1, "tiles": [[6, 0]]}]
    assert game.of("followers_returned", events) == [{"followers": [[0, 6, 0, "Se", "normal"]]}]
    assert game.state.seats[0].followers == 6
    assert game.state.board.feature_of(6, 0, 0).followers == ()


def test_a_court_tile_closes_a_tower():
    game = Game(["B16", "B20", "B20"])
    game.turn(6, 0, 180, at="S")  # a one-tile tower open to the south, a knight on it
    events = game.turn(6, 1)
    assert scored(game, events) == [("tower", "Se", 6, 0, [0], [2, 0])]
    assert game.scores == [2, 0]
    assert game.state.seats[0].followers == 6


def test_a_court_tile_closes_a_chapel():
    game = Game(["F01", "B20", "B20"], falcon=True)
    game.turn(7, 0, 180, at="S")  # a one-tile chapel against S2, open to the south, a preacher on it
    events = game.turn(7, 1)
    assert scored(game, events) == [("chapel", "Se", 7, 0, [0], [1, 0])]
    assert game.scores == [1, 0]
    assert game.state.seats[0].followers == 6


def test_a_house_tile_closes_a_chapel():
    game = Game(["F01", "B22", "B20"], falcon=True)
    game.turn(7, 0, 180, at="S")
    events = game.turn(7, 1)  # the all-house tile: the house stays open, the chapel is closed
    assert scored(game, events) == [("chapel", "Se", 7, 0, [0], [1, 0])]
    assert game.state.board.feature_of(7, 1, 0).complete is False


def test_a_tower_tile_closes_a_house():
    game = Game(["B14", "B23", "B20"])
    game.turn(6, 0, 180, at="S")
    events = game.turn(6, 1)  # the all-tower tile closes the house; the tower itself stays open
    assert scored(game, events) == [("house", "Se", 6, 0, [0], [1, 0])]
    assert game.state.seats[0].keep is not None


def test_the_wall_closes_a_building_of_the_placed_tile():
    game = Game(["B20", "B14", "B20"])
    game.turn(6, 0)                         # seat 0: a court against S2
    events = game.turn(5, 0, 0, at="N")     # seat 1: a house facing only the north wall
    assert scored(game, events) == [("house", "Nw", 5, 0, [1], [0, 1])]
    assert game.state.seats[1].followers == 6


def test_a_building_closed_by_the_wall_and_a_foreign_tile_together():
    game = Game(["B20", "B17", "B20"])
    game.turn(6, 0)                          # seat 0: a court against S2
    game.turn(5, 0, 270, at="W")             # seat 1: a tower facing the north wall and the open space (4, 0)
    events = game.turn(4, 0)                 # seat 0: a court closes it; the wall holds its north
    assert scored(game, events) == [("tower", "Nw", 5, 0, [1], [0, 2])]


def _two_foreign_buildings() -> Game:
    """Seat 0 owns a house at (6, 0) and a tower at (5, 1), both open only towards (6, 1), and
    is about to put a court tile there."""
    game = Game(["B14", "B20", "B16", "B19", "B20", "B14"])
    game.turn(6, 0, 180, at="S")   # seat 0: house facing south
    game.turn(5, 0)                # seat 1: a court to its west
    game.turn(5, 1, 90, at="E")    # seat 0: tower facing east
    game.turn(7, 0)                # seat 1: elsewhere
    game.place(6, 1)               # seat 0: closes both
    game.do("pass")
    return game


def test_one_tile_closing_two_foreign_buildings_lets_the_placer_choose_the_order():
    game = _two_foreign_buildings()
    assert game.state.phase.value == "score"
    assert game.legal() == [command("score", feature="Se", x=6, y=0), command("score", feature="En", x=5, y=1)]
    view = game.engine.view(game.state, 0)
    assert [(p["feature"], p["x"], p["y"], p["kind"], p["next"]) for p in view["pending"]] == [
        ("Se", 6, 0, "house", True), ("En", 5, 1, "tower", True),
    ]
    events = game.do("score", feature="E", x=5, y=1)  # any port of it names it
    assert scored(game, events) == [("tower", "En", 5, 1, [0], [2, 0]), ("house", "Se", 6, 0, [0], [1, 0])]
    assert [m["to"] for m in game.of("marker_moved", events)] == [2, 3]
    assert sorted(game.of("followers_returned", events)[0]["followers"]) == [
        [0, 5, 1, "En", "normal"], [0, 6, 0, "Se", "normal"],
    ]
    assert game.state.seats[0].followers == 6


def test_the_other_order_and_bad_names_of_a_foreign_building():
    game = _two_foreign_buildings()
    with pytest.raises(IllegalMove, match=r"'N' at \(6, 1\) is not a feature completed this turn"):
        game.do("score", feature="N")  # the placed court itself is not scored during the game
    with pytest.raises(IllegalMove, match=r"at \(9, 9\) is not a feature completed"):
        game.do("score", feature="S", x=9, y=9)
    events = game.do("score", feature="S", x=6, y=0)
    assert [s["kind"] for s in game.of("feature_scored", events)] == ["house", "tower"]
    assert game.scores == [3, 0]
