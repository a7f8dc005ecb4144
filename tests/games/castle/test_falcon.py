"""The Falcon: the rulebook's worked examples, chapels, aeries, prince, falconer, gates.

Falcon board: 11 x 9 without corners; start spaces S1 (2,-1) path south, S2 (7,-1) court,
S3 (11,2), S4 (11,6), S5 (8,9), S6 (3,9), S7 (-1,5), gate start spaces G1 (5,-1), G2 (-1,4)."""

from __future__ import annotations

import pytest

from games.base import Event, IllegalMove, command
from games.castle import ENGINE
from tests.games.castle.helpers import Game, give_wall_tile, set_score


def test_example_chapel_of_five_tiles_with_two_aeries_and_a_falconer():
    """'A 5-tile chapel with two aeries and a falconer gives 15 points and 3 tokens.'"""
    game = Game(["B13", "F09", "F08", "F01", "F03", "B20", "F15"], falcon=True)
    game.turn(2, 0, 0)                      # seat 0: dead end from S1
    game.turn(1, 0, 180)                    # seat 1: chapel part with aerie, N/W against the wall
    game.turn(1, 1, 0, at="N", kind="falconer")  # seat 0: falconer on the chapel's centre
    game.turn(2, 1, 270)                    # seat 1: chapel part from the east
    game.turn(0, 1, 0)                      # seat 0: L-shaped chapel part with aerie, from the west
    game.turn(3, 0)                         # seat 1: elsewhere
    events = game.turn(1, 2, 0)             # seat 0: chapel part from the south completes it
    scored = game.of("feature_scored", events)
    assert scored == [{
        "seat": 0, "feature": "Nw", "x": 1, "y": 2, "kind": "chapel",
        "tiles": [[0, 1], [1, 0], [1, 1], [1, 2], [2, 1]], "base": 15, "winners": [0],
        "points": [15, 0], "doubled": [None, None], "aeries": [3, 0],
    }]
    assert game.of("aeries_taken", events) == [{"seat": 0, "count": 3}]
    assert game.state.seats[0].aeries == 3
    assert game.state.seats[0].falconer is True  # back in the supply


def test_example_prince_on_a_four_tile_path_gives_eight():
    """'A prince on a 4-tile path gives 8' (and the path's one aerie gives one token)."""
    game = Game(["B01", "F11", "B20", "B13", "B19"], falcon=True)
    game.turn(2, 0, 0)                             # seat 0: S1 - (2,0)
    game.turn(2, 1, 0, at="N", kind="prince")      # seat 1: path with an aerie, prince
    game.turn(7, 0)                                # seat 0: elsewhere
    events = game.turn(2, 2, 0)                    # seat 1: dead end at a square
    scored = game.of("feature_scored", events)[0]
    assert (scored["kind"], scored["tiles"], scored["base"]) == ("path", [[2, -1], [2, 0], [2, 1], [2, 2]], 4)
    assert (scored["points"], scored["doubled"], scored["aeries"]) == ([0, 8], [None, "prince"], [0, 1])
    assert game.scores == [0, 8]
    assert game.state.seats[1].aeries == 1 and game.state.seats[1].prince is True


def test_example_plain_follower_on_a_three_tile_path_gives_three_and_one_token():
    game = Game(["F12", "B13"], falcon=True)
    game.turn(2, 0, 0, at="N")        # seat 0: curve with an aerie from S1, herald
    events = game.turn(3, 0, 270)     # seat 1 closes it; seat 0 scores
    scored = game.of("feature_scored", events)[0]
    assert (scored["tiles"], scored["points"], scored["aeries"]) == ([[2, -1], [2, 0], [3, 0]], [3, 0], [1, 0])
    assert game.state.seats[0].aeries == 1


def test_prince_and_falconer_may_not_go_where_their_tile_scores_at_once():
    game = Game(["F12", "B13"], falcon=True)
    game.turn(2, 0, 0)
    game.place(3, 0, 270)  # completes the path S1-(2,0)-(3,0)
    legal = game.legal()
    assert command("place_follower", at="W", kind="normal", role="herald") in legal
    assert command("place_follower", at="W", kind="prince", role="herald") not in legal
    assert command("place_follower", at="W", kind="falconer", role="herald") not in legal
    assert command("place_follower", at="Nw", kind="prince", role="merchant") in legal
    with pytest.raises(IllegalMove, match=r"may not go on a path this tile completes"):
        game.follower("W", "prince")
    events = game.follower("W")  # quick points with a plain herald are fine
    assert game.of("feature_scored", events)[0]["points"] == [0, 3]


def test_falconer_adds_a_token_for_its_owner_on_any_feature():
    game = Game(["F12", "F04", "B13"], falcon=True)
    game.turn(2, 0, 0, at="N", kind="falconer")
    game.turn(7, 0, 0)
    events = game.turn(3, 0, 270)  # seat 0 closes its own path: 3 points, 1 aerie + 1 falconer
    assert game.of("feature_scored", events)[0]["aeries"] == [2, 0]


def test_tied_chapel_gives_neither_points_nor_aeries():
    game = Game(["B20", "F01", "B20", "B19", "F02", "F08", "B19"], falcon=True)
    game.turn(7, 0)                  # seat 0
    game.turn(8, 0, 90, at="En")     # seat 1: preacher on a chapel part open to the east
    game.turn(8, 1)                  # seat 0
    game.turn(6, 0)                  # seat 1
    game.turn(9, 1, 0, at="N")       # seat 0: preacher on a chapel part (with an aerie) open to the north
    events = game.turn(9, 0)         # seat 1: the full chapel tile joins both and closes them
    scored = game.of("feature_scored", events)
    assert [(s["kind"], s["base"], s["winners"], s["points"], s["aeries"]) for s in scored] == [
        ("chapel", 6, [], [0, 0], [0, 0])
    ]
    assert game.of("aeries_taken", events) == []
    assert [s.followers for s in game.state.seats] == [6, 6]


def test_prince_doubling_excludes_a_doubling_wall_tile():
    game = Game(["B21", "B20", "B14", "B20"], falcon=True)
    give_wall_tile(game, 0, "double_house")
    game.turn(7, 0, 270, at="N", kind="prince")
    game.turn(8, 0)
    game.place(6, 0, 90)
    events = game.do("pass")
    assert game.of("feature_scored", events)[0]["doubled"] == ["prince", None]
    assert game.of("feature_scored", events)[0]["points"] == [4, 0]
    assert [h.kind for h in game.state.seats[0].wall_tiles] == ["double_house"]


def test_aerie_bonus_at_the_end_goes_to_more_tokens_and_a_tie_scores_nothing():
    game = Game(["F12", "B13"], falcon=True)
    game.turn(2, 0, 0, at="N")
    events = game.turn(3, 0, 270)
    bonus = [f for f in game.of("final_scored", events) if f["item"] == "aeries"]
    assert bonus == [{"item": "aeries", "seat": 0, "points": 93, "values": [1, 0], "empty_area": 93}]

    tied = Game(["F12", "B13"], falcon=True)
    tied.inject(Event("aeries_taken", {"seat": 1, "count": 1}))
    tied.turn(2, 0, 0, at="N")
    events = tied.turn(3, 0, 270)
    assert [f for f in tied.of("final_scored", events) if f["item"] == "aeries"] == []


def test_when_aerie_tokens_run_out_both_hand_back_the_same_number():
    game = Game(["F12", "B13", "B20"], falcon=True)
    game.inject(Event("aeries_taken", {"seat": 0, "count": 7}), Event("aeries_taken", {"seat": 1, "count": 4}))
    assert game.state.aerie_supply == 1
    game.turn(2, 0, 0, at="N", kind="falconer")
    events = game.turn(3, 0, 270)  # seat 0 needs 2 tokens, 1 is left
    assert game.of("aeries_returned", events) == [{"each": 1}]
    assert game.of("aeries_taken", events) == [{"seat": 0, "count": 2}]
    assert [s.aeries for s in game.state.seats] == [8, 3]
    assert game.state.aerie_supply == 1


def test_gates_are_skipped_without_the_variant():
    game = Game(["B06", "B06"], falcon=True)
    set_score(game, 1, 26)
    game.turn(10, 2, 0)
    events = game.turn(10, 1, 90, at="S")  # 3 points: 26 -> 29 over the gate 27/28
    assert game.of("marker_moved", events)[0] == {"seat": 1, "points": 3, "from": 26, "to": 29, "gate": None, "lost": 0}


def test_halt_variant_stops_the_marker_at_the_gate():
    game = Game(["B06", "B06"], falcon=True, halt_at_gates=True)
    set_score(game, 1, 26)
    game.turn(10, 2, 0)
    events = game.turn(10, 1, 90, at="S")
    assert game.of("marker_moved", events)[0] == {"seat": 1, "points": 3, "from": 26, "to": 27, "gate": 27, "lost": 2}
    view = ENGINE.view(game.state, None)
    assert (view["seats"][1]["score"], view["seats"][1]["at_gate"]) == (27, [27, 28])


def test_halt_variant_does_not_apply_to_the_final_scoring():
    game = Game(["B21", "B20", "B14", "B20"], falcon=True, halt_at_gates=True)
    set_score(game, 0, 20)
    game.turn(7, 0, 270, at="N")
    game.turn(8, 0)
    game.turn(6, 0, 90)   # house of 2: 20 -> 22, keep 2
    events = game.turn(9, 0)
    keep = game.of("final_scored", events)[0]
    assert keep["item"] == "keep" and keep["points"] == 91
    assert game.of("marker_moved", events)[-1] == {"seat": 0, "points": 91, "from": 22, "to": 113, "gate": None, "lost": 0}


def test_chapel_scores_by_the_table_and_an_incomplete_chapel_scores_nothing():
    game = Game(["B20", "F10", "F01"], falcon=True)
    game.turn(7, 0)
    events = game.turn(7, 1, 0, at="chapel")  # a closed one-tile chapel: 1 point at once
    scored = game.of("feature_scored", events)[0]
    assert (scored["feature"], scored["kind"], scored["points"]) == ("chapel", "chapel", [0, 1])
    events = game.turn(6, 0, 180, at="S")  # chapel part open to the south
    assert game.of("feature_scored", events) == []
    assert [f for f in game.of("final_scored", events) if f.get("kind") == "chapel"] == []


def test_falcon_supply_has_prince_and_falconer():
    game = Game(["B01"], falcon=True)
    view = ENGINE.view(game.state, 0)
    assert view["seats"][0]["supply"] == {"normal": 6, "prince": True, "falconer": True}
    assert view["aerie_supply"] == 12
    assert len(view["start_spaces"]) == 9


def _seat_1_earns_three_tokens(held: tuple[int, int]) -> tuple[Game, list[Event]]:
    """Seat 1's falconer on a path with two aeries (F11, F12) that seat 0 closes: 3 tokens."""
    game = Game(["F11", "F12", "B13", "B20"], falcon=True)
    game.inject(*(Event("aeries_taken", {"seat": s, "count": n}) for s, n in enumerate(held) if n))
    game.turn(2, 0)                          # seat 0: the path from S1 runs south
    game.turn(2, 1, 0, at="N", kind="falconer")  # seat 1: turns east, falconer on it
    events = game.turn(3, 1, 270)            # seat 0: a dead end closes it, 4 tiles
    assert game.of("feature_scored", events)[0]["aeries"] == [0, 3]
    return game, events


def test_an_empty_supply_keeps_the_difference_when_the_earner_holds_fewer_than_it_must_hand_back():
    game, events = _seat_1_earns_three_tokens((11, 1))
    # Seat 1 takes its 3, then both hand back 2: 9 / 2, the difference 10 - 3 = 7.
    assert [(e.type, e.payload) for e in events if e.type.startswith("aeries")] == [
        ("aeries_taken", {"seat": 1, "count": 3}), ("aeries_returned", {"each": 2}),
    ]
    assert [s.aeries for s in game.state.seats] == [9, 2]
    assert game.state.aerie_supply == 1
    view = ENGINE.view(game.state, None)
    assert ([s["aeries"] for s in view["seats"]], view["aerie_supply"]) == ([9, 2], 1)


def test_twelve_to_nothing_the_trailing_seat_still_gains():
    game, _ = _seat_1_earns_three_tokens((12, 0))
    assert [s.aeries for s in game.state.seats] == [10, 1]  # the difference 12 - 3 = 9


def test_a_lead_beyond_the_twelve_tokens_is_still_counted():
    game = Game(["F11", "F12", "B13", "F02"], falcon=True)
    game.inject(Event("aeries_taken", {"seat": 0, "count": 12}))
    game.turn(2, 0, 0, at="N", kind="falconer")  # seat 0: falconer on the path from S1
    game.turn(2, 1, 0)
    events = game.turn(3, 1, 270)                # seat 0 closes it: 3 tokens, seat 1 holds none to hand back
    aerie_events = [(e.type, e.payload) for e in events if e.type.startswith("aeries")]
    assert aerie_events == [("aeries_taken", {"seat": 0, "count": 3})]
    assert [s.aeries for s in game.state.seats] == [15, 0]
    assert game.state.aerie_supply == 0
