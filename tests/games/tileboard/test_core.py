"""The shared tile-board core: geometry, tiles, features, legality, followers, majority."""

from __future__ import annotations

import pytest

from games.tileboard import (
    PORT_INDEX,
    WALL,
    Board,
    BoardRules,
    Follower,
    IllegalPlacement,
    Segment,
    Ties,
    Tile,
    majority,
    mirror_port,
    rotate_port,
)

CITY, ROAD, FIELD = Segment("city"), Segment("road"), Segment("field")


def carc_tile(tile_id: str, ports: str, extra: dict[str, Segment] | None = None, touches=None) -> Tile:
    segs = {}
    for tok in ports.replace(" ", ""):
        segs[tok] = CITY if tok.isupper() else ROAD if tok.isalpha() else FIELD
    segs.update(extra or {})
    return Tile.from_tokens(tile_id, ports, segs, touches=touches)


class MiddleRules(BoardRules):
    def side_key(self, kinds):
        return kinds[1]


D = carc_tile("D", "AAA 1r2 222 2r1", touches={"1": "A"})
E = carc_tile("E", "AAA 111 111 111", touches={"1": "A"})
V = carc_tile("V", "111 111 1r2 2r1")
B = carc_tile("B", "111 111 111 111", {"m": Segment("monastery")})
U = carc_tile("U", "1r2 222 2r1 111")


def start() -> Board:
    return Board.empty(MiddleRules()).place(D, 0, 0, 0, check=False)


def test_port_geometry_matches_the_rules_file():
    assert [rotate_port(PORT_INDEX[p], 1) for p in ("Nw", "N", "Wn")] == [3, 4, 2]
    assert mirror_port(PORT_INDEX["Nw"]) == PORT_INDEX["Sw"]
    assert mirror_port(PORT_INDEX["En"]) == PORT_INDEX["Wn"]
    assert mirror_port(PORT_INDEX["S"]) == PORT_INDEX["N"]
    assert all(mirror_port(mirror_port(p)) == p for p in range(12))


def test_tile_rotation_moves_the_city_cap_clockwise():
    assert [s.token for s in D.segments] == ["A", "1", "r", "2"]
    # D turned 90: the cap is on the east side, the road runs north-south.
    assert D.rotated[1][3:6] == (0, 0, 0)
    assert D.side_kinds[1] == (("field", "road", "field"), ("city",) * 3, ("field", "road", "field"), ("field",) * 3)
    assert D.segment_ports[1][2] == (1, 7)


def test_symmetric_tiles_dedupe_rotations():
    assert B.canonical_turn == (0, 0, 0, 0)
    assert U.canonical_turn == (0, 1, 0, 1)
    assert D.canonical_turn == (0, 1, 2, 3)


def test_portless_segment_is_kept():
    assert B.portless_segments() == (1,)
    assert B.segments[1].kind == "monastery"


def test_legal_placements_list_every_rotation_but_distinct_dedupes():
    board = start()
    all_b = board.legal_placements(B)
    # B (all field) fits south of D and nowhere else that touches a city or road side.
    assert sorted(all_b) == [(0, 1, r) for r in (0, 90, 180, 270)]
    assert board.legal_placements(B, distinct=True) == [(0, 1, 0)]
    assert board.is_legal(B, 0, 1, 270)
    assert not board.is_legal(B, 1, 0, 0)
    assert not board.is_legal(B, 5, 5, 0)


def test_unmatched_edge_is_refused():
    with pytest.raises(IllegalPlacement):
        start().place(E, 0, -1, 0)  # a field side against the start city


def test_two_caps_close_a_city_and_old_board_is_untouched():
    b0 = start()
    b1 = b0.place(E, 0, -1, 180)
    city = b1.feature_of(0, 0, 0)
    assert city.complete and city.cells == frozenset({(0, 0), (0, -1)})
    assert b1.feature_of(0, -1, 0) is city
    assert not b0.feature_of(0, 0, 0).complete
    assert (0, -1) not in b0.cells and len(b0) == 1


def test_open_ports_count_each_port_facing_an_empty_cell():
    board = start()
    road = board.feature_of(0, 0, 2)
    assert road.open_ports == 2
    assert board.open_ports(road) == [(0, 0, 4), (0, 0, 10)]
    field1 = board.feature_of(0, 0, 1)
    assert field1.open_ports == 2  # En and Wn


def test_road_loop_joins_the_same_feature_twice():
    board = start()
    board = board.place(V, 0, 1, 270)
    board = board.place(V, 1, 1, 0)
    board = board.place(V, 0, 2, 180)
    board = board.place(V, 1, 2, 90)
    loop = board.feature_of(1, 2, 2)
    assert loop.complete
    assert loop.cells == frozenset({(0, 1), (1, 1), (0, 2), (1, 2)})


def test_field_touches_city_through_segment_touches():
    board = start()
    field1 = board.feature_of(0, 0, 1)
    assert board.touching_features(field1) == {board.feature_of(0, 0, 0).id}
    assert board.touching_features(board.feature_of(0, 0, 3)) == set()


def test_followers_merge_with_their_features_and_free_spots_shrink():
    board = start().with_follower(Follower(0, "normal", 0, 0, 2))
    assert board.free_segments(0, 0) == [0, 1, 3]
    board = board.place(U, 1, 0, 90)
    assert board.free_segments(1, 0) == [0, 2]  # U's road (segment 1) joined the occupied road
    road = board.feature_of(1, 0, board.cells[(1, 0)].ports[PORT_INDEX["W"]])
    assert [f.owner for f in road.followers] == [0]
    cleared = board.without_followers([road.id])
    assert cleared.feature_of(0, 0, 2).followers == ()
    assert board.feature_of(0, 0, 2).followers != ()


def test_majority_ties_and_weights():
    f = [Follower(0, "large", 0, 0, 0), Follower(1, "normal", 0, 0, 0), Follower(1, "normal", 0, 0, 0)]
    weight = lambda fl: 2 if fl.kind == "large" else 1  # noqa: E731
    assert majority(f, weight) == (0, 1)
    assert majority(f, weight, Ties.NOBODY_SCORES) == ()
    assert majority(f[:2], weight) == (0,)
    assert majority([]) == ()


class WalledRules(BoardRules):
    """A 3x1 playable strip (x 0..2, y 0) with walls around; paths must meet paths."""

    def is_playable(self, x, y):
        return y == 0 and 0 <= x <= 2

    def side_key(self, kinds):
        return tuple(k == "path" for k in kinds)

    def joins(self, mine, theirs):
        return mine == theirs


PATH_EW = Tile.from_tokens("P", "aaa 1p2 bbb 2p1", {"a": Segment("house"), "b": Segment("house"),
                                                    "p": Segment("path"), "1": Segment("court"), "2": Segment("court")})
HALF = Tile.from_tokens("start", "... ... ... .p.", {"p": Segment("path")})
HOUSE = Tile.from_tokens("H", "aaa aaa aaa aaa", {"a": Segment("house")})


def test_walls_close_ports_and_fixed_pieces_anchor_placement():
    rules = WalledRules()
    board = Board.empty(rules).place(HALF, 3, 0, 0, check=False, fixed=True)
    assert list(board.frontier) == [(2, 0)]
    assert board.frontier[(2, 0)][0] is WALL
    assert board.legal_placements(HOUSE) == []
    assert sorted(board.legal_placements(PATH_EW)) == [(2, 0, 0), (2, 0, 180)]
    board = board.place(PATH_EW, 2, 0, 0)
    path = board.feature_of(2, 0, board.cells[(2, 0)].ports[4])
    assert path.cells == frozenset({(2, 0), (3, 0)})
    assert path.open_ports == 1  # only the west end; north and south face walls
    house = board.feature_of(2, 0, 0)
    assert house.complete  # faces the wall
    assert board.cells[(3, 0)].fixed


def test_house_beside_court_does_not_join_in_a_castle_like_game():
    class Loose(WalledRules):
        def joins(self, mine, theirs):
            return mine == theirs == "path" or mine == theirs

    board = Board.empty(Loose()).place(HALF, 3, 0, 0, check=False, fixed=True).place(PATH_EW, 2, 0, 0)
    board = board.place(PATH_EW, 1, 0, 180)
    left = board.cells[(1, 0)]
    # rotated 180: its houses face north/south walls; its courts meet the other tile's courts.
    assert board.feature_of(1, 0, left.ports[4]).cells == frozenset({(1, 0), (2, 0), (3, 0)})


def test_design_key_is_equal_only_for_the_same_design_in_some_rotation():
    from games.tileboard import design_key

    d_turned = carc_tile("D2", "2r1 AAA 1r2 222", touches={"1": "A"})  # D turned 90
    d_without_touch = carc_tile("D3", "2r1 AAA 1r2 222")
    assert design_key(D) == design_key(d_turned)
    assert design_key(D) != design_key(d_without_touch)
    assert design_key(D) != design_key(E) and design_key(U) != design_key(V)
