"""Drawing tiles in the core: picks over a multiset, scripted orders, redraws (games.tileboard.draw)."""

from __future__ import annotations

import pytest

from games.base import BadOptions
from games.draw import Dealer
from games.tileboard import (
    Board,
    BoardRules,
    Segment,
    Tile,
    check_draw_order,
    draw,
    draw_sequence,
    draw_until_placeable,
    pick,
    take,
)
from service.fairness.draw_schemes import LegacyRandom


class SouthOnly(BoardRules):
    """Facing sides match by their middle kind; only the start cell and the one south of it exist."""

    def side_key(self, kinds):
        return kinds[1]

    def is_playable(self, x, y):
        return (x, y) in ((0, 0), (0, 1))


CITY, ROAD, FIELD = Segment("city"), Segment("road"), Segment("field")
D = Tile.from_tokens("D", "AAA 1r2 222 2r1", {"A": CITY, "1": FIELD, "r": ROAD, "2": FIELD})
CAPS = Tile.from_tokens("C", "AAA AAA AAA AAA", {"A": CITY})
ROADS = Tile.from_tokens("X", "1r1 1r1 1r1 1r1", {"1": FIELD, "r": ROAD})
FIELDS = Tile.from_tokens("F", "111 111 111 111", {"1": FIELD})
TILES = {"D": D, "C": CAPS, "X": ROADS, "F": FIELDS}


def test_pick_walks_the_multiset_in_its_order():
    pool = (("A", 2), ("B", 0), ("C", 1))
    assert [pick(pool, i) for i in range(3)] == ["A", "A", "C"]
    with pytest.raises(ValueError):
        pick(pool, 3)


def test_draw_per_decision_uses_one_randrange_over_the_total():
    pool = (("A", 2), ("B", 3))
    rng, same = LegacyRandom(9), LegacyRandom(9)
    assert draw(rng, pool, deck="d", contents=("A", "A", "B", "B", "B")) == pick(pool, same.randrange(5))
    assert rng.getstate() == same.getstate()


def test_a_dealt_pile_is_drawn_in_its_deal_order_from_where_the_draws_reached():
    contents = ("A", "A", "B", "B", "B")
    order = Dealer(bytes(32), "g").deal("d", 0, contents)
    assert sorted(order) == list(contents) and order == Dealer(bytes(32), "g").deal("d", 0, contents)
    left = list(order[2:])
    pool = tuple((name, left.count(name)) for name in ("A", "B"))
    assert draw(Dealer(bytes(32), "g"), pool, deck="d", contents=contents) == order[2]
    assert list(draw_sequence(Dealer(bytes(32), "g"), pool, contents=contents, deck="d")) == list(order[2:])
    many = tuple(range(20))
    deals = {Dealer(bytes(32), game).deal(deck, number, many) for game, deck, number in (
        ("g", "d", 0), ("g", "d", 1), ("g", "e", 0), ("h", "d", 0))}
    assert len(deals) == 4  # each deal of each deck of each game its own


def test_take_drops_an_exhausted_entry():
    assert take((("A", 2), ("B", 1)), "A") == (("A", 1), ("B", 1))
    assert take((("A", 2), ("B", 1)), "B") == (("A", 2),)


def test_draw_sequence_draws_each_item_once_and_lazily():
    pool = (("A", 2), ("B", 1), ("C", 0))
    contents = ("A", "A", "B")
    assert sorted(draw_sequence(LegacyRandom(3), pool, contents=contents)) == ["A", "A", "B"]
    rng = LegacyRandom(3)
    first = next(draw_sequence(rng, pool, contents=contents))
    assert first == pick(pool, LegacyRandom(3).randrange(3))
    assert list(draw_sequence(rng, pool, order=("B", "A"), contents=contents)) == ["B", "A"]
    assert sorted(draw_sequence(Dealer(bytes(32), "g"), pool, contents=contents)) == ["A", "A", "B"]


def test_unplaceable_tiles_are_returned_in_draw_order_before_the_one_that_fits():
    # The only free cell is south of D, facing its field side: only an all-field tile fits.
    board = Board.empty(SouthOnly()).place(D, 0, 0, 0, check=False)
    assert not board.can_place(ROADS) and not board.can_place(CAPS) and board.can_place(FIELDS)
    assert draw_until_placeable(board, TILES.__getitem__, iter(["X", "C", "F", "X"])) == (["X", "C"], "F")
    assert draw_until_placeable(board, TILES.__getitem__, iter(["X"])) == (["X"], None)


def test_a_scripted_order_is_checked_against_the_pile_reporting_every_problem():
    available = {"A": 2, "B": 1}
    assert check_draw_order(["A", "B", "A"], available) == ("A", "B", "A")
    assert check_draw_order([], available) == ()
    with pytest.raises(BadOptions) as caught:
        check_draw_order(["Z", "B", "B", "Y"], available, noun="castle tile of this game")
    assert caught.value.message == (
        "option 'tile_order' names 'Z', which is not a castle tile of this game; "
        "uses 'B' 2 times; the game has 1 (more often than the box holds); "
        "names 'Y', which is not a castle tile of this game")
    with pytest.raises(BadOptions, match="must be a non-empty list of tile ids"):
        check_draw_order([], available, allow_empty=False)
    with pytest.raises(BadOptions, match=r"must be a list of tile ids, got \['A', 3\]"):
        check_draw_order(["A", 3], available)
