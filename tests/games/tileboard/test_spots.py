"""Naming segments of placed tiles and the follower step of the core (games.tileboard.spots)."""

from __future__ import annotations

from games.tileboard import (
    Board,
    BoardRules,
    Follower,
    Segment,
    Tile,
    feature_at,
    find_segment,
    follower_record,
    free_spots,
    segment_name,
)

CITY, ROAD, FIELD = Segment("city"), Segment("road"), Segment("field")
MONASTERY = Segment("monastery", (("name", "monastery"),))


class MiddleRules(BoardRules):
    def side_key(self, kinds):
        return kinds[1]


# D: city cap north, road west-east. A: monastery with a road south. V: a curve, road S and W.
D = Tile.from_tokens("D", "AAA 1r2 222 2r1", {"A": CITY, "1": FIELD, "r": ROAD, "2": FIELD}, touches={"1": "A"})
A = Tile.from_tokens("A", "111 111 1r1 111", {"1": FIELD, "r": ROAD, "m": MONASTERY})
U_CURVE = Tile.from_tokens("V", "111 111 1r2 2r1", {"1": FIELD, "r": ROAD, "2": FIELD})


def test_canonical_name_is_the_first_port_or_with_middle_first_the_first_middle_port():
    board = Board.empty(MiddleRules()).place(D, 0, 0, 0, check=False)
    placed = board.cells[(0, 0)]
    assert [segment_name(placed, i) for i in range(4)] == ["Nw", "En", "E", "Es"]
    assert [segment_name(placed, i, middle_first=True) for i in range(4)] == ["N", "En", "E", "S"]
    turned = Board.empty(MiddleRules()).place(D, 0, 0, 90, check=False).cells[(0, 0)]
    assert segment_name(turned, 0, middle_first=True) == "E"


def test_portless_segment_is_named_by_its_name_attribute():
    placed = Board.empty(MiddleRules()).place(A, 0, 0, 0, check=False).cells[(0, 0)]
    assert segment_name(placed, 2) == "monastery"
    assert find_segment(placed, "monastery") == 2
    assert find_segment(placed, "inner_field") is None


def test_any_port_of_a_segment_finds_it():
    placed = Board.empty(MiddleRules()).place(D, 0, 0, 0, check=False).cells[(0, 0)]
    assert {find_segment(placed, at) for at in ("Nw", "N", "Ne")} == {0}
    assert find_segment(placed, "W") == 2 and find_segment(placed, "Sw") == 3
    assert find_segment(placed, "nowhere") is None


def test_free_spots_skip_occupied_features_and_may_list_a_shared_feature_once():
    board = Board.empty(MiddleRules()).place(D, 0, 0, 0, check=False)
    city = board.feature_of(0, 0, 0)
    board = board.with_follower(Follower(1, "normal", 0, 0, 0))
    assert [s.at for s in free_spots(board, 0, 0, middle_first=True)] == ["En", "E", "S"]
    spots = free_spots(board, 0, 0)
    assert [(s.segment, s.feature.kind) for s in spots] == [(1, "field"), (2, "road"), (3, "field")]
    assert feature_at(board, 0, 0, "N").id == city.id
    assert feature_at(board, 0, 0, "N").followers == (Follower(1, "normal", 0, 0, 0),)


def test_one_per_feature_lists_a_road_looping_back_onto_its_own_tile_once():
    # The N and E stubs of a crossing, joined by three curves into one road.
    x = Tile.from_tokens("X", "1r2 2s3 3t4 4u1", {"1": FIELD, "r": ROAD, "2": FIELD, "s": ROAD, "3": FIELD,
                                                  "t": ROAD, "4": FIELD, "u": ROAD})
    board = Board.empty(MiddleRules()).place(x, 0, 0, 0, check=False)
    for cell, rotation in (((0, -1), 270), ((1, -1), 0), ((1, 0), 90)):
        board = board.place(U_CURVE, *cell, rotation, check=False)
    assert board.feature_of(0, 0, 1) is board.feature_of(0, 0, 3)
    every = [s.at for s in free_spots(board, 0, 0) if s.feature.kind == "road"]
    once = [s.at for s in free_spots(board, 0, 0, one_per_feature=True) if s.feature.kind == "road"]
    assert every == ["N", "E", "S", "W"] and once == ["N", "S", "W"]


def test_follower_record_is_how_events_name_a_follower():
    board = Board.empty(MiddleRules()).place(D, 0, 0, 0, check=False)
    follower = Follower(0, "large", 0, 0, 0)
    assert follower_record(board, follower) == [0, 0, 0, "Nw", "large"]
    assert follower_record(board, follower, middle_first=True) == [0, 0, 0, "N", "large"]
