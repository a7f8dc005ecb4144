"""Base-game rules as scenarios on the shipped board (10 x 8 without corners; start spaces
S1 (2,-1) path south, S2 (6,-1) court with market, S3 (10,2) path west, S4 (10,5) path west,
S5 (7,8) and S6 (3,8) paths north, S7 (-1,4) path east). Tiles are drawn in a scripted order."""

from __future__ import annotations

import pytest

from games.base import (
    BadCommand,
    BadOptions,
    GameOver,
    IllegalMove,
    NotYourTurn,
    UnknownCommand,
    command,
)
from games.castle import ENGINE
from games.castle.rules import usable_wall_tiles
from games.castle.scoring import controllers
from games.castle.state import with_seat
from games.tileboard import Follower
from tests.games.castle.helpers import Game, give_wall_tile, set_score


def test_the_first_tile_must_touch_a_start_space_along_an_edge():
    game = Game(["B01", "B01"])
    with pytest.raises(IllegalMove, match=r"touches no tile and no start space"):
        game.place(4, 4)
    with pytest.raises(IllegalMove, match=r"not a space inside the castle wall"):
        game.place(0, 0)
    with pytest.raises(IllegalMove, match=r"a path would be interrupted"):
        game.place(2, 0, 90)  # S1's path meets the court side of the turned tile
    game.place(2, 0, 0)
    assert game.state.board.at(2, 0).tile.id == "B01"


def test_only_paths_must_match_houses_may_face_courts():
    game = Game(["B21", "B20"])
    # The house of B21 (turned 270: house on N and W) faces S2's court: allowed.
    game.turn(6, 0, 270)
    game.turn(7, 0)
    assert sorted(game.state.board.cells) == sorted([(6, 0), (7, 0), *((s.x, s.y) for s in ENGINE.dataset.boards["base"].start_spaces)])


def test_legal_lists_every_rotation_decide_accepts():
    game = Game(["B20", "B01"])
    legal = game.legal()
    assert [m for m in legal if m["args"]["x"] == 6] == [command("place_tile", x=6, y=0, rotation=r) for r in (0, 90, 180, 270)]
    assert all(m["args"]["x"] == 6 for m in legal)  # every other start space has a path


def test_path_ending_at_the_wall_is_complete_and_the_start_space_counts_as_a_tile():
    game = Game(["B06", "B06"])
    game.turn(9, 2, 0)  # path from S3 (east) turning north
    events = game.turn(9, 1, 90, at="S")  # path runs into the east wall at (10, 1)
    scored = game.of("feature_scored", events)
    assert scored == [{
        "seat": 1, "feature": "E", "x": 9, "y": 1, "kind": "path", "tiles": [[9, 1], [9, 2], [10, 2]],
        "base": 3, "winners": [1], "points": [0, 3], "doubled": [None, None], "aeries": [0, 0],
    }]
    assert game.scores == [0, 3]
    # Quick points: the herald came back at the end of the same turn.
    assert game.state.seats[1].followers == 6
    assert game.of("followers_returned", events) == [{"followers": [[1, 9, 1, "E", "normal"]]}]


def test_tie_on_a_path_scores_nothing_by_default():
    game = Game(["B06", "B06", "B01", "B01"])
    game.turn(9, 2, 90, at="E")
    game.turn(9, 5, 0, at="E")
    game.turn(9, 3)
    events = game.turn(9, 4)
    assert game.of("feature_scored", events)[0]["winners"] == []
    assert game.scores == [0, 0]
    assert [s.followers for s in game.state.seats] == [6, 6]


def test_tie_option_both_score_in_full():
    game = Game(["B06", "B06", "B01", "B01"], ties="both")
    game.turn(9, 2, 90, at="E")
    game.turn(9, 5, 0, at="E")
    game.turn(9, 3)
    events = game.turn(9, 4)
    assert game.of("feature_scored", events)[0]["points"] == [6, 6]
    # The placing player (seat 1) moves first.
    assert [m["seat"] for m in game.of("marker_moved", events)] == [1, 0]
    assert game.scores == [6, 6]


def test_majority_counts_figures_and_a_tie_is_nobody_unless_the_option_says_both():
    figures = [Follower(0, "normal", 0, 0, 0), Follower(0, "prince", 1, 0, 0), Follower(1, "normal", 2, 0, 0)]
    assert controllers(figures, ties_score=False) == (0,)
    assert controllers(figures[1:], ties_score=False) == ()
    assert controllers(figures[1:], ties_score=True) == (0, 1)
    assert controllers([], ties_score=True) == ()


def _three_paths() -> Game:
    """Seat 0 is about to close three paths with a square: two its own, one seat 1's."""
    game = Game(["B01", "B13", "B06", "B13", "B06", "B20", "B11"])
    game.turn(2, 0, 0, at="N")    # seat 0: S1 - (2,0), herald
    game.turn(1, 0, 180)          # seat 1: dead end at (1,0) running south
    game.turn(1, 1, 0, at="N")    # seat 0: (1,0) - (1,1) east, herald
    game.turn(3, 0, 180, at="S")  # seat 1: dead end at (3,0) running south, herald
    game.turn(3, 1, 270)          # seat 0: (3,0) - (3,1) west
    game.turn(6, 0)               # seat 1: elsewhere
    game.place(2, 1, 0)           # seat 0: the square closes N, W and E
    return game


def test_placing_player_chooses_the_order_of_its_own_features_first():
    game = _three_paths()
    events = game.do("pass")
    assert game.state.phase.value == "score"
    assert game.legal() == [command("score", feature="N"), command("score", feature="W")]
    with pytest.raises(IllegalMove, match=r"own features come first"):
        game.do("score", feature="E")
    events = game.do("score", feature="W")
    scored = game.of("feature_scored", events)
    assert [(s["feature"], s["winners"], s["points"]) for s in scored] == [
        ("W", [0], [3, 0]), ("N", [0], [3, 0]), ("E", [1], [0, 3]),
    ]
    assert game.scores == [6, 3]
    assert sorted(game.of("followers_returned", events)[0]["followers"]) == [
        [0, 1, 1, "N", "normal"], [0, 2, 0, "N", "normal"], [1, 3, 0, "S", "normal"],
    ]
    assert game.state.phase.value == "place_tile" or game.state.phase.value == "over"


def test_score_accepts_any_port_of_the_feature():
    game = _three_paths()
    game.do("pass")
    game.do("score", feature="W")
    assert game.scores == [6, 3]


def test_landing_exactly_on_a_corner_tower_takes_its_wall_tile():
    game = Game(["B06", "B06"], seed=3)
    set_score(game, 1, 10)
    game.turn(9, 2, 0)
    events = game.turn(9, 1, 90, at="S")
    taken = game.of("wall_tile_taken", events)
    assert len(taken) == 1 and taken[0]["seat"] == 1 and taken[0]["tower"] == 1 and taken[0]["spaces"] == [12, 13]
    kind = taken[0]["tile"]
    assert [h.kind for h in game.state.seats[1].wall_tiles] == [kind]
    assert game.state.towers[1] is False
    assert sum(n for _, n in game.state.wall_pool) == 17
    view = ENGINE.view(game.state, 0)
    assert view["seats"][1]["wall_tiles"][0]["tile"] == kind
    assert view["towers"][1] == {"spaces": [12, 13], "wall_tile": False}
    assert view["wall_tiles_on_towers"] == 12


def test_a_tower_already_emptied_gives_nothing():
    game = Game(["B06", "B06"])
    game.state = game.state.but(towers=(False,) * 14)
    set_score(game, 1, 10)
    game.turn(9, 2, 0)
    events = game.turn(9, 1, 90, at="S")
    assert game.of("wall_tile_taken", events) == []
    assert game.scores[1] == 13


def test_towers_are_taken_on_later_laps_too():
    game = Game(["B06", "B06"])
    set_score(game, 1, 110)
    game.turn(9, 2, 0)
    events = game.turn(9, 1, 90, at="S")
    assert game.scores[1] == 113
    assert game.of("wall_tile_taken", events)[0]["tower"] == 1


def _house_for_seat_0() -> Game:
    """Seat 0 has a squire on a 2-tile house it is about to close (turn 3)."""
    game = Game(["B21", "B20", "B14", "B20"])
    game.turn(6, 0, 270, at="N")  # house on N (against S2's court) and W
    game.place(7, 0)
    return game


def test_doubling_wall_tile_doubles_own_house_and_is_offered_in_legal():
    game = _house_for_seat_0()
    give_wall_tile(game, 0, "double_house")  # "taken" in turn 2: usable in turn 3
    game.do("pass")
    game.place(5, 0, 90)
    game.do("pass")
    assert game.legal() == [command("score", feature="En"), command("use_wall_tile", tile="double_house", target="En")]
    events = game.do("use_wall_tile", tile="double_house", target="En")
    scored = game.of("feature_scored", events)[0]
    assert (scored["base"], scored["points"], scored["doubled"]) == (2, [4, 0], ["wall_tile", None])
    assert game.scores == [4, 0]
    assert game.state.seats[0].wall_tiles == ()


def test_wall_tile_taken_this_turn_cannot_be_used_this_turn():
    game = _house_for_seat_0()
    game.do("pass")
    game.place(5, 0, 90)
    give_wall_tile(game, 0, "double_house")  # as if taken earlier in this turn
    events = game.do("pass")
    assert game.of("feature_scored", events)[0]["points"] == [2, 0]
    assert [h.kind for h in game.state.seats[0].wall_tiles] == ["double_house"]
    with pytest.raises(NotYourTurn):
        game.do("use_wall_tile", seat=0, tile="double_house", target="En")


def test_wall_tiles_cannot_be_used_in_the_opponents_turn():
    game = Game(["B06", "B06"])
    give_wall_tile(game, 0, "extra_turn")
    game.turn(9, 2, 90)
    with pytest.raises(NotYourTurn):
        game.do("use_wall_tile", seat=0, tile="extra_turn")


def test_extra_turn_wall_tile_gives_one_more_turn():
    game = Game(["B06", "B06", "B01", "B01"])
    give_wall_tile(game, 0, "extra_turn")  # taken in turn 1: usable from turn 2 on
    game.turn(9, 2, 90)
    assert game.state.active == 1  # not offered in the turn it was taken
    game.turn(9, 5, 0)
    game.place(9, 3)
    game.do("pass")
    assert game.state.phase.value == "end_turn"
    assert game.legal() == [command("use_wall_tile", tile="extra_turn"), command("end_turn")]
    events = game.do("use_wall_tile", tile="extra_turn")
    assert game.of("turn_ended", events) == [{"seat": 0, "next": 0, "extra_turn": True}]
    assert game.state.active == 0 and game.state.extra_turns == 0
    game.turn(9, 4)
    assert game.state.phase.value == "over"


def test_end_turn_keeps_the_extra_turn_tile_for_later():
    game = Game(["B06", "B06", "B01", "B01"])
    give_wall_tile(game, 0, "extra_turn")
    game.turn(9, 2, 90)
    game.turn(9, 5, 0)
    game.place(9, 3)
    game.do("pass")
    events = game.do("end_turn")
    assert game.of("turn_ended", events) == [{"seat": 0, "next": 1, "extra_turn": False}]
    assert [h.kind for h in game.state.seats[0].wall_tiles] == ["extra_turn"]


def test_keep_goes_on_the_first_house_scored_and_moves_only_to_a_larger_one():
    game = Game(["B21", "B20", "B14", "B19", "B14", "B20"])
    game.turn(6, 0, 270, at="N")
    game.turn(7, 0)
    events = game.turn(5, 0, 90)
    assert game.of("keep_moved", events) == [{"seat": 0, "size": 2, "tiles": [[5, 0], [6, 0]]}]
    game.turn(8, 0)
    events = game.turn(4, 0, 0, at="N")  # a one-tile house against the wall: complete at once
    assert game.of("feature_scored", events)[0]["points"] == [1, 0]
    assert game.of("keep_moved", events) == []
    assert game.state.seats[0].keep.size == 2


def test_larger_keep_scores_the_largest_empty_area_at_the_end():
    game = Game(["B21", "B20", "B14", "B20"])
    game.turn(6, 0, 270, at="N")
    game.turn(7, 0)
    game.turn(5, 0, 90)
    events = game.turn(8, 0)
    assert game.state.phase.value == "over"
    keep = game.of("final_scored", events)[0]
    assert keep == {"item": "keep", "seat": 0, "points": 72, "values": [2, None], "empty_area": 72}
    assert game.scores == [2 + 72, 0]
    assert game.of("game_ended", events) == [{"scores": [74, 0], "winners": [0]}]


def test_keep_value_wall_tile_can_win_the_keep_comparison():
    game = Game(["B21", "B20", "B14", "B14"])
    give_wall_tile(game, 1, "keep_bonus")
    game.turn(6, 0, 270, at="N")
    game.turn(7, 0)
    game.turn(5, 0, 90)                 # seat 0: keep of 2
    events = game.turn(4, 0, 0, at="N")  # seat 1: a house of 1 against the wall, keep 1 + 3
    keep = game.of("final_scored", events)[0]
    assert (keep["item"], keep["seat"], keep["values"]) == ("keep", 1, [2, 4])


def test_equal_keeps_score_nothing():
    game = Game(["B14", "B14"])
    game.turn(6, 0, 0, at="N")   # seat 0: house against S2's court, complete: keep 1
    events = game.turn(5, 0, 0, at="N")  # seat 1: house against the wall: keep 1
    assert [s.keep.size for s in game.state.seats] == [1, 1]
    assert [f["item"] for f in game.of("final_scored", events)] == []


def test_courts_score_three_per_market_at_the_end_including_the_start_space_market():
    game = Game(["B19", "B20"])
    game.turn(6, 0, 0, at="N")   # merchant on the court joined with S2's printed market
    events = game.turn(7, 0)
    court = [f for f in game.of("final_scored", events) if f["item"] == "court"]
    assert court == [{"item": "court", "seat": 0, "points": 6, "markets": 2, "per_market": 3, "doubled": None,
                      "tiles": [[6, -1], [6, 0], [7, 0]]}]
    # Merchants never go back.
    assert game.state.seats[0].followers == 5


def test_market_wall_tile_makes_markets_worth_four():
    game = Game(["B19", "B20"])
    give_wall_tile(game, 0, "market_four")
    game.turn(6, 0, 0, at="N")
    events = game.turn(7, 0)
    court = next(f for f in game.of("final_scored", events) if f["item"] == "court")
    assert (court["points"], court["per_market"]) == (8, 4)


def test_tied_court_scores_nothing():
    game = Game(["B19", "B14", "B20", "B20"])
    game.turn(6, 0, 0, at="N")    # seat 0: merchant on the market court
    game.turn(7, 0, 270, at="N")  # seat 1: merchant on a court the house keeps apart
    game.turn(7, 1)
    events = game.turn(6, 1)      # joins both courts: one merchant each
    assert game.state.board.feature_of(6, 1, 0).followers != ()
    assert len(game.state.board.feature_of(6, 1, 0).followers) == 2
    assert [f for f in game.of("final_scored", events) if f["item"] == "court"] == []


def test_incomplete_feature_wall_tile_scores_ones_own_open_path():
    game = Game(["B01", "B20"])
    give_wall_tile(game, 0, "incomplete_path")
    game.turn(2, 0, 0, at="N")
    events = game.turn(6, 0)
    item = [f for f in game.of("final_scored", events) if f["item"] == "incomplete"]
    assert item == [{"item": "incomplete", "seat": 0, "points": 2, "tile": "incomplete_path", "kind": "path",
                     "tiles": [[2, -1], [2, 0]]}]


def test_incomplete_features_score_nothing_without_the_wall_tile():
    game = Game(["B01", "B20"])
    game.turn(2, 0, 0, at="N")
    events = game.turn(6, 0)
    assert game.of("final_scored", events) == []
    assert game.scores == [0, 0]


def test_flat_points_wall_tile_at_the_end():
    game = Game(["B01", "B20"])
    give_wall_tile(game, 1, "flat_points")
    game.turn(2, 0)
    events = game.turn(6, 0)
    assert game.of("final_scored", events) == [{"item": "flat_points", "seat": 1, "points": 5, "tile": "flat_points"}]
    assert game.scores == [0, 5]


def test_unplaceable_tile_is_set_aside_and_another_drawn():
    game = Game(["B12", "B22", "B01"])
    events = game.turn(6, 0)  # every open edge now demands a path; B22 has none
    assert game.of("tile_set_aside", events) == [{"tile": "B22"}]
    assert game.of("tile_drawn", events) == [{"seat": 1, "tile": "B01"}]
    assert game.state.set_aside == ("B22",)
    assert ENGINE.view(game.state, None)["set_aside"] == ["B22"]


def test_game_ends_when_the_tiles_run_out():
    game = Game(["B01"])
    game.turn(2, 0)
    assert ENGINE.is_terminal(game.state)
    with pytest.raises(GameOver):
        game.do("place_tile", seat=1, x=3, y=0, rotation=0)
    assert ENGINE.summary(game.state)["status"] == "over"


def test_follower_rules():
    game = Game(["B01", "B01", "B01"])
    with pytest.raises(IllegalMove, match=r"waits for place_tile"):
        game.do("pass")
    game.place(2, 0)
    with pytest.raises(BadCommand, match=r"names no part of tile B01"):
        game.follower("X")
    with pytest.raises(BadCommand, match=r"exists only with the Falcon"):
        game.follower("N", "prince")
    with pytest.raises(BadCommand, match=r"is a herald, not a 'knight'"):
        game.do("place_follower", at="N", kind="normal", role="knight")
    assert game.legal() == [
        command("place_follower", at="Nw", kind="normal", role="merchant"),
        command("place_follower", at="N", kind="normal", role="herald"),
        command("place_follower", at="Ne", kind="normal", role="merchant"),
        command("pass"),
    ]
    game.follower("S")
    assert game.state.board.at(2, 0) is not None
    game.place(2, 1)
    with pytest.raises(IllegalMove, match=r"already holds a follower"):
        game.follower("N")


def test_no_follower_left_means_only_pass():
    game = Game(["B01", "B01"])
    game.place(2, 0)
    game.state = with_seat(game.state, 0, followers=0)
    assert game.legal() == [command("pass")]


def test_commands_are_checked():
    game = Game(["B01", "B01"])
    with pytest.raises(UnknownCommand):
        game.do("fly")
    with pytest.raises(NotYourTurn):
        game.do("place_tile", seat=1, x=2, y=0, rotation=0)
    with pytest.raises(BadCommand, match=r"integer 'x'"):
        game.do("place_tile", x="2", y=0, rotation=0)
    with pytest.raises(BadCommand, match=r"rotation must be one of"):
        game.do("place_tile", x=2, y=0, rotation=45)
    with pytest.raises(BadCommand):
        ENGINE.decide(game.state, 0, {"type": "pass", "args": 3}, game.rng)


def test_options_are_normalized_and_checked():
    assert ENGINE.normalize_options({}, 2) == {"falcon": False, "ties": "nobody", "halt_at_gates": False, "tile_order": None}
    with pytest.raises(BadOptions, match="exactly 2 players"):
        ENGINE.normalize_options({}, 3)
    with pytest.raises(BadOptions, match="no option 'farmers'"):
        ENGINE.normalize_options({"farmers": True}, 2)
    with pytest.raises(BadOptions, match="'ties' must be"):
        ENGINE.normalize_options({"ties": "all"}, 2)
    with pytest.raises(BadOptions, match="needs the Falcon"):
        ENGINE.normalize_options({"halt_at_gates": True}, 2)
    with pytest.raises(BadOptions, match="'F01', which is not a castle tile"):
        ENGINE.normalize_options({"tile_order": ["F01"]}, 2)
    with pytest.raises(BadOptions, match="uses 'B22' 2 times; the game has 1"):
        ENGINE.normalize_options({"tile_order": ["B22", "B22"]}, 2)


def test_opponent_landing_on_a_tower_in_my_turn_takes_it_for_its_next_turn():
    game = Game(["B06", "B06", "B13", "B01"], seed=3)
    set_score(game, 1, 9)
    game.turn(9, 2, 0)                # seat 0: from S3, turning north
    game.turn(9, 1, 180, at="S")      # seat 1: herald, the path turns west
    events = game.turn(8, 1, 90)      # seat 0 closes seat 1's path: 4 tiles, 9 -> 13
    taken = game.of("wall_tile_taken", events)
    assert [(t["seat"], t["tower"]) for t in taken] == [(1, 1)]
    assert game.state.seats[1].wall_tiles[0].taken_turn == 3
    assert game.state.active == 1 and game.state.turn == 4
    assert usable_wall_tiles(game.state, 1) == [taken[0]["tile"]]
