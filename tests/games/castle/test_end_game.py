"""The Castle's base game: the extra-turn wall tile, each end-game wall tile, ties on a court and a
tile that fits nowhere, as scenarios with exact points and exact events.

Positions are built on the shipped dataset (see test_rules.py for the start spaces); the rules
checked do not depend on it: the keep and aerie bonuses count the empty interior spaces, so their
figures (72 of the 76 spaces here) follow from the positions."""

from __future__ import annotations

import pytest

from games.base import IllegalMove, command
from tests.games.castle.helpers import Game, give_wall_tile


def timeline(events) -> list[tuple[str, dict]]:
    return [(e.type, e.payload) for e in events]


def test_the_extra_turn_tile_gives_the_same_seat_the_next_tile():
    game = Game(["B06", "B06", "B01", "B01"])
    give_wall_tile(game, 0, "extra_turn")
    game.turn(9, 2, 90)
    game.turn(9, 5, 0)
    game.place(9, 3)
    events = game.do("pass")
    assert timeline(events) == [("follower_passed", {"seat": 0})]
    assert game.legal() == [command("use_wall_tile", tile="extra_turn"), command("end_turn")]
    events = game.do("use_wall_tile", tile="extra_turn")
    assert timeline(events) == [
        ("wall_tile_used", {"seat": 0, "tile": "extra_turn"}),
        ("turn_ended", {"seat": 0, "next": 0, "extra_turn": True}),
        ("tile_drawn", {"seat": 0, "tile": "B01"}),
    ]
    assert game.state.seats[0].wall_tiles == ()
    with pytest.raises(IllegalMove, match=r"holds no 'extra_turn'"):
        game.do("use_wall_tile", tile="extra_turn")


def test_no_extra_turn_is_offered_when_no_castle_tile_is_left():
    game = Game(["B06", "B06", "B01"])
    give_wall_tile(game, 0, "extra_turn")  # usable from turn 2 on
    game.turn(9, 2, 90)
    game.turn(9, 5, 0)
    events = game.turn(9, 3)  # seat 0 places the last tile: the game ends, the tile is never offered
    assert timeline(events) == [
        ("tile_placed", {"seat": 0, "tile": "B01", "x": 9, "y": 3, "rotation": 0}),
        ("follower_passed", {"seat": 0}),
        ("turn_ended", {"seat": 0, "next": 1, "extra_turn": False}),
        ("game_ended", {"scores": [0, 0], "winners": [0, 1]}),
    ]
    assert [h.kind for h in game.state.seats[0].wall_tiles] == ["extra_turn"]  # worth nothing at the end


def test_the_market_tile_lifts_the_court_with_the_most_markets_only():
    game = Game(["B19", "B20", "B24"])
    give_wall_tile(game, 0, "market_four")
    game.turn(6, 0, 0, at="N")  # a merchant on a court with two markets (one printed on S2)
    game.turn(7, 0)
    events = game.turn(2, 0, 0, at="W")  # a merchant on a court with one market, by S1
    assert [(t, p) for t, p in timeline(events) if t in ("final_scored", "marker_moved", "game_ended")] == [
        ("final_scored", {"item": "court", "seat": 0, "points": 8, "markets": 2, "per_market": 4, "doubled": None,
                          "tiles": [[6, -1], [6, 0], [7, 0]]}),
        ("marker_moved", {"seat": 0, "points": 8, "from": 0, "to": 8, "gate": None, "lost": 0}),
        ("final_scored", {"item": "court", "seat": 0, "points": 3, "markets": 1, "per_market": 3, "doubled": None,
                          "tiles": [[2, -1], [2, 0]]}),
        ("marker_moved", {"seat": 0, "points": 3, "from": 8, "to": 11, "gate": None, "lost": 0}),
        ("game_ended", {"scores": [11, 0], "winners": [0]}),
    ]


def test_the_keep_tile_adds_to_the_keep_and_the_larger_keep_scores_the_empty_area():
    game = Game(["B21", "B20", "B14", "B14"])
    give_wall_tile(game, 1, "keep_bonus")
    game.turn(6, 0, 270, at="N")
    game.turn(7, 0)
    game.turn(5, 0, 90)                  # seat 0: a house of 2, keep 2
    events = game.turn(4, 0, 0, at="N")  # seat 1: a house of 1 against the wall, keep 1 + 3
    assert [(t, p) for t, p in timeline(events) if t in ("final_scored", "marker_moved", "game_ended")][-3:] == [
        ("final_scored", {"item": "keep", "seat": 1, "points": 72, "values": [2, 4], "empty_area": 72}),
        ("marker_moved", {"seat": 1, "points": 72, "from": 1, "to": 73, "gate": None, "lost": 0}),
        ("game_ended", {"scores": [2, 73], "winners": [1]}),
    ]


def test_the_flat_points_tile_scores_five_at_the_end():
    game = Game(["B01", "B20"])
    give_wall_tile(game, 1, "flat_points")
    game.turn(2, 0)
    events = game.turn(6, 0)
    assert timeline(events)[-3:] == [
        ("final_scored", {"item": "flat_points", "seat": 1, "points": 5, "tile": "flat_points"}),
        ("marker_moved", {"seat": 1, "points": 5, "from": 0, "to": 5, "gate": None, "lost": 0}),
        ("game_ended", {"scores": [0, 5], "winners": [1]}),
    ]


def test_incomplete_house_and_tower_tiles_score_ones_own_open_buildings():
    game = Game(["B21", "B20", "B17", "B20"])
    give_wall_tile(game, 0, "incomplete_house")
    give_wall_tile(game, 0, "incomplete_tower")
    give_wall_tile(game, 1, "incomplete_house")  # seat 1 holds no open house: the tile gives nothing
    game.turn(6, 0, 90, at="E")   # seat 0: a house open east and south, a squire on it
    game.turn(5, 0)
    game.turn(4, 0, 180, at="S")  # seat 0: a tower open south and west, a knight on it
    events = game.turn(5, 1)      # seat 1 places the last tile, closing nothing
    assert timeline(events)[3:] == [
        ("final_scored", {"item": "incomplete", "seat": 0, "points": 1, "tile": "incomplete_house", "kind": "house",
                          "tiles": [[6, 0]]}),
        ("marker_moved", {"seat": 0, "points": 1, "from": 0, "to": 1, "gate": None, "lost": 0}),
        ("final_scored", {"item": "incomplete", "seat": 0, "points": 2, "tile": "incomplete_tower", "kind": "tower",
                          "tiles": [[4, 0]]}),
        ("marker_moved", {"seat": 0, "points": 2, "from": 1, "to": 3, "gate": None, "lost": 0}),
        ("game_ended", {"scores": [3, 0], "winners": [0]}),
    ]


@pytest.mark.parametrize("ties", ["nobody", "both"])
def test_a_tied_court_scores_nothing_whatever_the_ties_option(ties):
    game = Game(["B19", "B14", "B20", "B20"], ties=ties)
    game.turn(6, 0, 0, at="N")    # seat 0: a merchant on the market court
    game.turn(7, 0, 270, at="N")  # seat 1: a merchant on a court its house keeps apart
    game.turn(7, 1)
    events = game.turn(6, 1)      # joins both courts: one merchant each
    assert timeline(events)[2:] == [
        ("turn_ended", {"seat": 1, "next": 0, "extra_turn": False}),
        ("game_ended", {"scores": [0, 0], "winners": [0, 1]}),
    ]
    assert [s.followers for s in game.state.seats] == [5, 5]  # merchants never return


def test_a_last_tile_that_fits_nowhere_is_set_aside_and_the_game_ends():
    game = Game(["B12", "B22"])
    events = game.turn(6, 0)  # every open edge now demands a path; B22 has none
    assert timeline(events) == [
        ("tile_placed", {"seat": 0, "tile": "B12", "x": 6, "y": 0, "rotation": 0}),
        ("follower_passed", {"seat": 0}),
        ("turn_ended", {"seat": 0, "next": 1, "extra_turn": False}),
        ("tile_set_aside", {"tile": "B22"}),
        ("game_ended", {"scores": [0, 0], "winners": [0, 1]}),
    ]
    assert game.state.set_aside == ("B22",) and game.state.remaining == 0
