"""The rules file's published examples (section 12.1) and engine-verified scenarios (12.2)."""

from __future__ import annotations

from games.carcassonne.scoring import score_city
from games.carcassonne.state import Options
from games.tileboard import Feature
from tests.games.carcassonne.play import play_script

S2 = [
    ("IC-B", 0, (1, 0), "large:E"),
    ("V", 180, (1, -1), "N"),
    ("V", 0, (2, -1), None),
    ("V", 90, (2, 0), None),
    ("W", 0, (-1, 0), None),
    ("A", 0, (1, -2), None),
]


def test_s1_two_tile_city_scores_4():
    game = play_script([("E", 180, (0, -1), "S")])
    assert game.state.scores == (4, 0)
    (city,) = game.scored()
    assert city == {
        "feature": "city", "tiles": [[0, -1], [0, 0]], "pennants": 0, "multiplier": 2, "points": 4,
        "winners": [0], "followers_returned": [[0, 0, -1, "S", "normal"]], "final": False,
        "inn": False, "cathedral": False,
    }


def test_s1_two_tile_city_scores_2_with_first_edition_option():
    game = play_script([("E", 180, (0, -1), "S")], tiny_city_points=2)
    assert game.state.scores == (2, 0)
    assert game.scored()[0]["multiplier"] == 1


def test_s2_inn_road_large_follower_wins_alone():
    game = play_script(S2, inns_cathedrals=True)
    assert game.state.scores == (14, 0)
    (road,) = game.scored()
    assert road["points"] == 14 and road["multiplier"] == 2 and road["inn"] is True
    assert road["winners"] == [0]
    assert len(road["tiles"]) == 7
    assert road["followers_returned"] == [[0, 1, 0, "E", "large"], [1, 1, -1, "N", "normal"]]
    assert game.state.supply == ((7, 1), (7, 1))


def test_s2b_two_large_followers_tie_and_both_score():
    steps = list(S2)
    steps[1] = ("V", 180, (1, -1), "large:N")
    game = play_script(steps, inns_cathedrals=True)
    assert game.state.scores == (14, 14)


def test_s2c_incomplete_inn_road_scores_zero_at_the_end():
    game = play_script(S2[:-1], inns_cathedrals=True)
    assert game.state.scores == (0, 0)
    (road,) = game.scored()
    assert road["final"] is True and road["multiplier"] == 0 and road["points"] == 0 and road["winners"] == [0]


def test_s3_farms_each_field_on_its_own():
    game = play_script([
        ("E", 180, (0, -1), "N"),
        ("U", 90, (1, 0), "N"),
        ("B", 0, (1, -1), None),
        ("E", 0, (1, -2), None),
        ("E", 180, (1, -3), "N"),
    ])
    assert game.state.scores == (9, 6)
    fields = [s for s in game.scored() if s["feature"] == "field"]
    assert sorted((s["points"], tuple(s["winners"])) for s in fields) == [(3, (0,)), (6, (0, 1))]


def test_s4_road_loop_of_four_tiles():
    game = play_script([
        ("V", 270, (0, 1), "E"),
        ("V", 0, (1, 1), None),
        ("V", 180, (0, 2), None),
        ("V", 90, (1, 2), None),
    ])
    assert game.state.scores == (4, 0)
    assert game.scored()[0]["tiles"] == [[0, 1], [0, 2], [1, 1], [1, 2]]


def test_s5_final_scoring_of_incomplete_city_road_and_monastery():
    game = play_script([
        ("M", 180, (0, -1), "S"),
        ("A", 90, (1, 0), "monastery"),
        ("U", 90, (-1, 0), "E"),
    ])
    assert game.state.scores == (6, 3)
    by_kind = {s["feature"]: s["points"] for s in game.scored()}
    assert by_kind == {"city": 3, "road": 3, "monastery": 3}


def test_s6_inner_field_touches_all_four_caps():
    game = play_script([("IC-H", 0, (0, -1), "inner_field")], inns_cathedrals=True)
    assert game.state.scores == (3, 0)
    (field,) = game.scored()
    assert field["cities"] == [[[0, -1], [0, 0]]]


def test_s7_cathedral_city_triples_and_feeds_the_farm():
    game = play_script([
        ("IC-K", 0, (0, -1), "N"),
        ("E", 270, (1, -1), None),
        ("E", 90, (-1, -1), None),
        ("E", 180, (0, -2), "N"),
    ], inns_cathedrals=True)
    assert game.state.scores == (15, 3)
    city = game.scored()[0]
    assert (city["points"], city["multiplier"], city["cathedral"], city["final"]) == (15, 3, True, False)


def test_completed_city_of_five_tiles_and_one_pennant_scores_12():
    game = play_script([
        ("C", 0, (0, -1), "N"),
        ("E", 270, (1, -1), None),
        ("E", 90, (-1, -1), None),
        ("E", 180, (0, -2), None),
    ])
    assert game.state.scores == (12, 0)
    assert game.scored()[0]["pennants"] == 1


def _inn_road(junction_first: str) -> list:
    return [
        (junction_first, 0, (-1, 0), "E"),
        ("IC-B", 0, (1, 0), None),
        ("U", 90, (2, 0), None),
        ("W", 0, (3, 0), None),
    ]


def test_completed_road_of_five_tiles_with_an_inn_scores_10():
    game = play_script(_inn_road("W"), inns_cathedrals=True)
    assert game.state.scores == (10, 0)


def test_second_inn_on_the_road_adds_nothing():
    game = play_script(_inn_road("IC-C"), inns_cathedrals=True)
    (road,) = game.scored()
    assert road["points"] == 10 and road["multiplier"] == 2


def test_incomplete_road_with_an_inn_scores_0_at_the_end():
    game = play_script(_inn_road("W")[:3], inns_cathedrals=True)
    assert game.state.scores == (0, 0)


def test_completed_four_tile_road_shared_by_one_follower_each_gives_4_to_both():
    game = play_script([
        ("W", 0, (-1, 0), "E"),
        ("B", 0, (0, 1), None),
        ("B", 0, (1, 1), None),
        ("B", 0, (2, 1), None),
        ("B", 0, (0, 2), None),
        ("W", 180, (2, 0), "W"),
        ("U", 90, (1, 0), None),
    ])
    road = next(s for s in game.scored() if s["feature"] == "road")
    assert (road["points"], road["winners"], len(road["tiles"])) == (4, [0, 1], 4)
    assert game.state.scores == (4, 4)


def test_small_field_with_two_completed_cities_scores_6():
    game = play_script([
        ("I", 180, (0, -1), "N"),
        ("E", 90, (-1, -1), None),
    ])
    assert game.state.scores == (6, 0)


def test_cathedral_city_of_twelve_tiles_scores_36():
    city = Feature(0, "city", frozenset(), frozenset((x, 0) for x in range(12)), 0, {"cathedral": 1})
    payload = score_city(_EmptyBoard(), city, False, Options(inns_cathedrals=True))
    assert (payload["points"], payload["multiplier"]) == (36, 3)


class _EmptyBoard:
    cells: dict = {}


# --- the special tiles the issue names -------------------------------------------------------


def test_monastery_splits_the_road_so_the_west_leg_completes():
    game = play_script([("IC-D", 0, (1, 0), "W"), ("W", 0, (-1, 0), None)], inns_cathedrals=True)
    (road,) = game.scored()
    assert (road["feature"], road["points"], road["tiles"]) == ("road", 3, [[-1, 0], [0, 0], [1, 0]])
    assert game.state.scores == (3, 0)


def test_crossing_ends_the_roads_and_its_stubs_are_not_roads():
    game = play_script([("IC-I", 0, (1, 0), "W"), ("W", 0, (-1, 0), "Es")], inns_cathedrals=True)
    road = game.scored()[0]
    assert (road["points"], road["tiles"], road["final"]) == (3, [[-1, 0], [0, 0], [1, 0]], False)
    crossing = game.state.board.cells[(1, 0)]
    assert sorted(s.kind for s in crossing.tile.segments).count("road") == 2


def test_arrow_tile_strip_field_is_closed_at_its_corner():
    game = play_script([("IC-G", 270, (0, -1), "W"), ("B", 0, (1, -1), "W")], inns_cathedrals=True)
    # The strip (west side here) and the other field are two fields; each touches the closed city.
    fields = sorted((s["winners"], s["points"]) for s in game.scored() if s["feature"] == "field")
    assert fields == [([0], 3), ([1], 3)]
    assert game.state.scores == (3, 3)


def test_field_scores_only_the_completed_caps_it_touches():
    # IC-O's single field touches its three caps; N cap closes with the start tile (S side here).
    game = play_script([("IC-O", 180, (0, -1), "N")], inns_cathedrals=True)
    (field,) = game.scored()
    assert field["cities"] == [[[0, -1], [0, 0]]] and field["points"] == 3


def test_tile_holding_two_parts_of_one_city_counts_once():
    # I's two caps (N and E) are joined by a ring of three corner tiles: 4 tiles, not 5.
    game = play_script([
        ("E", 180, (0, -1), None),
        ("I", 0, (1, -1), "N"),
        ("N", 180, (1, -2), None),
        ("N", 270, (2, -2), None),
        ("N", 0, (2, -1), None),
    ])
    (city,) = [s for s in game.scored() if s["feature"] == "city"]
    assert (city["tiles"], city["points"]) == ([[1, -2], [1, -1], [2, -2], [2, -1]], 8)
    assert game.state.scores == (0, 8)
