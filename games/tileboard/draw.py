"""Drawing tiles: uniform picks over what is left, scripted orders, and the redraw of tiles that
fit nowhere.

A pile is a multiset given as ``(id, count)`` pairs in a stable order: the state never holds a
shuffled list, so neither it nor the event log holds the future. Under ``donjon-draw-2`` the pile
is dealt once, when the game starts (``rng.deal``, the whole pile in canonical order): the next
tile is the one at the position of the deal that the tiles drawn so far have reached. Under the
schemes that draw per decision (``rng.deal`` answers ``None``) a pick takes ``rng.randrange(total)``
and walks the pairs, so the same rng state always gives the same tile. A scripted order (a
tutorial, a puzzle, a game from the table) replaces both.

>>> from games.draw import Dealer, Draw
>>> pick((("A", 2), ("B", 1)), 2)
'B'
>>> take((("A", 2), ("B", 1)), "B")
(('A', 2),)
>>> list(draw_sequence(Draw(b"", "legality check", 0), (), order=["C", "A"], contents=()))
['C', 'A']
>>> dealt = Dealer(bytes(32), "g").deal(TILES, 0, ("A", "A", "B"))
>>> list(draw_sequence(Dealer(bytes(32), "g"), (("A", 1), ("B", 1)), contents=("A", "A", "B"))) == list(dealt[1:])
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from games.base import BadOptions, Rng
from games.base.rng import dealt_rest
from games.tileboard.board import Board
from games.tileboard.tiles import Tile

__all__ = ["TILES", "check_draw_order", "draw", "draw_sequence", "draw_until_placeable", "pick", "take"]

TILES = "tiles"
"""The deck name of a tile game's draw pile (the stream ``<game id>:deal:tiles``)."""

Pool = Iterable[tuple[str, int]]

_count = itemgetter(1)


def pick(pool: Pool, index: int) -> str:
    """The ``index``-th item of the multiset laid out in the pool's order."""
    for name, count in pool:
        if index < count:
            return name
        index -= count
    raise ValueError("index beyond the pool")


def draw(rng: Rng, pool: Sequence[tuple[str, int]], *, deck: str, contents: Sequence[str]) -> str:
    """The next item of ``pool``, what is left of the deck ``deck`` dealt once as ``contents``
    (the whole deck in canonical order): the deal's next item, or, under a scheme that draws per
    decision, one item of the multiset uniformly."""
    left = sum(map(_count, pool))
    rest = dealt_rest(rng, deck, 0, contents, left)
    if rest is not None:
        return rest[0]
    return pick(pool, rng.randrange(left))


def take(pool: Sequence[tuple[str, int]], name: str) -> tuple[tuple[str, int], ...]:
    """The pool with one ``name`` fewer; an exhausted entry leaves the pool."""
    for i, (n, c) in enumerate(pool):
        if n == name:
            rest = pool[i + 1 :]
            return (*pool[:i], *rest) if c == 1 else (*pool[:i], (n, c - 1), *rest)
    return tuple(pool)


def draw_sequence(
    rng: Rng,
    pool: Sequence[tuple[str, int]],
    order: Sequence[str] | None = None,
    *,
    contents: Sequence[str],
    deck: str = TILES,
) -> Iterator[str]:
    """Successive draws from what is left (``pool``) of the pile dealt once as ``contents``: the
    rest of a scripted ``order`` in turn, else the rest of the deal, else (a scheme that draws per
    decision) uniform picks over ``pool``, each removing what it drew. Lazy: a draw happens only
    when asked for."""
    if order is not None:
        yield from order
        return
    total = sum(map(_count, pool))
    rest = dealt_rest(rng, deck, 0, contents, total)
    if rest is not None:
        yield from rest
        return
    while total:
        name = pick(pool, rng.randrange(total))
        yield name
        pool = take(pool, name)  # only when a redraw is asked for
        total -= 1


def draw_until_placeable(
    board: Board, tile: Callable[[str], Tile], drawn: Iterable[str]
) -> tuple[list[str], str | None]:
    """Take tiles from ``drawn`` until one fits somewhere on ``board``: the ones that fit nowhere
    (set aside or discarded by the game, in draw order) and the one that fits, or ``None`` when
    ``drawn`` ran out first."""
    unplaceable: list[str] = []
    for tile_id in drawn:
        if board.can_place(tile(tile_id)):
            return unplaceable, tile_id
        unplaceable.append(tile_id)
    return unplaceable, None


def check_draw_order(
    order: Any,
    available: Mapping[str, int],
    *,
    option: str = "tile_order",
    allow_empty: bool = True,
    noun: str = "tile of this game",
) -> tuple[str, ...]:
    """A scripted draw order as a tuple, if the pile can deliver it: every id in ``available``
    and none more often than its count there. :class:`BadOptions` lists every problem at once."""
    if not isinstance(order, (list, tuple)) or not all(isinstance(t, str) for t in order):
        raise BadOptions(f"option {option!r} must be a list of tile ids, got {order!r}")
    if not order and not allow_empty:
        raise BadOptions(f"option {option!r} must be a non-empty list of tile ids, got {order!r}")
    problems = []
    for tile_id, used in Counter(order).items():
        if tile_id not in available:
            problems.append(f"names {tile_id!r}, which is not a {noun}")
        elif used > available[tile_id]:
            problems.append(f"uses {tile_id!r} {used} times; the game has {available[tile_id]} "
                            "(more often than the box holds)")
    if problems:
        raise BadOptions(f"option {option!r} " + "; ".join(problems))
    return tuple(order)
