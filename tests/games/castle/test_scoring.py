"""Feature points, the chapel table and the largest empty area."""

from __future__ import annotations

import pytest

from games.castle.scoring import (
    chapel_points,
    court_points,
    feature_points,
    largest_empty_area,
)


@pytest.mark.parametrize("tiles,points", [(1, 1), (2, 3), (3, 6), (4, 10), (5, 15), (6, 21), (7, 28), (8, 36), (12, 36)])
def test_chapel_table(tiles, points):
    assert chapel_points(tiles) == points
    assert feature_points("chapel", tiles=tiles) == points


def test_path_scores_one_per_tile_and_two_with_a_fountain():
    assert feature_points("path", tiles=5) == 5
    assert feature_points("path", tiles=5, fountains=1) == 10
    assert feature_points("path", tiles=5, fountains=2) == 10


def test_house_one_per_tile_tower_two_per_tile_court_nothing_during_play():
    assert (feature_points("house", tiles=3), feature_points("tower", tiles=3), feature_points("court", tiles=3)) == (3, 6, 0)


def test_markets_score_three_or_the_wall_tile_value():
    assert (court_points(5), court_points(5, 4)) == (15, 20)


def test_largest_empty_area_is_orthogonally_connected():
    interior = {(x, y) for x in range(4) for y in range(3)}
    wall_of_tiles = {(1, 0), (1, 1), (1, 2), (3, 1)}
    # Left column (3 spaces) is cut off; right side: (2,0),(3,0),(2,1),(2,2),(3,2) = 5.
    assert largest_empty_area(interior, wall_of_tiles) == 5
    assert largest_empty_area(interior, interior) == 0
