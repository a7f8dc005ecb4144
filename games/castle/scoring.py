"""The Castle's scoring rules: points of features, majorities, the prince's doubling, scoring a
completed feature on the wall (marker, corner towers, aerie tokens, the keep) and the final scoring.

>>> feature_points("path", tiles=4, fountains=1), feature_points("tower", tiles=3)
(8, 6)
>>> [chapel_points(n) for n in range(1, 10)]
[1, 3, 6, 10, 15, 21, 28, 36, 36]

The functions that score emit events through an :class:`Emitter` (the decider's running command,
:class:`games.castle.rules.Emit`): each later step reads the state the earlier events made (a
tower taken by the first scoring is empty for the second).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from games.base import Rng
from games.castle.data import WallEffect, WallTileKind
from games.castle.state import CastleState, FeatureRef
from games.castle.tables import CastleTables
from games.tileboard import Board, Feature, Follower, Ties, draw, feature_at, majority, segment_name

__all__ = [
    "WALL_TILES",
    "CHAPEL_TABLE",
    "MARKET_POINTS",
    "PRINCE_FACTOR",
    "SCORED_KINDS",
    "Emitter",
    "chapel_points",
    "completed_by_placement",
    "completed_feature",
    "controllers",
    "court_points",
    "doubling",
    "feature_points",
    "final_scoring",
    "largest_empty_area",
    "move_marker",
    "score_feature",
    "scorers",
    "take_aeries",
]

WALL_TILES = "wall_tiles"
"""The deck name of the wall tiles' deal (the stream ``<game id>:deal:wall_tiles``)."""

SCORED_KINDS = frozenset({"path", "house", "tower", "chapel"})
"""Kinds scored when completed during the game (courts only at the end)."""

PRINCE_FACTOR = 2
"""The prince (king) doubles its owner's points for its feature; a wall tile doubles the same way."""

CHAPEL_TABLE: tuple[int, ...] = (0, 1, 3, 6, 10, 15, 21, 28, 36)
"""Falcon chapel points by tile count 0..8; 8 or more tiles score 36."""

MARKET_POINTS = 3
"""Points per market of a court at the end (4 with the market wall tile)."""


def chapel_points(tiles: int) -> int:
    return CHAPEL_TABLE[min(tiles, len(CHAPEL_TABLE) - 1)]


def feature_points(kind: str, *, tiles: int, fountains: int = 0) -> int:
    """Points of a completed (or wall-tile-scored) path, house, tower or chapel.

    A path scores 1 per tile, 2 per tile with at least one fountain (start spaces count as
    tiles); a house 1 per tile; a tower 2 per tile; a chapel by the table. Courts score only at
    the end, by markets (:func:`court_points`).
    """
    if kind == "path":
        return tiles * (2 if fountains else 1)
    if kind == "house":
        return tiles
    if kind == "tower":
        return 2 * tiles
    if kind == "chapel":
        return chapel_points(tiles)
    return 0


def court_points(markets: int, per_market: int = MARKET_POINTS) -> int:
    return markets * per_market


def controllers(followers: Iterable[Follower], *, ties_score: bool) -> tuple[int, ...]:
    """Seats that score a feature: the most followers (each figure counts one, prince and
    falconer too); a tie scores nothing unless ``ties_score``."""
    return majority(followers, ties=Ties.ALL_SCORE if ties_score else Ties.NOBODY_SCORES)


def largest_empty_area(interior: Iterable[tuple[int, int]], occupied: Iterable[tuple[int, int]]) -> int:
    """Size of the largest orthogonally connected group of empty interior spaces.

    >>> largest_empty_area({(0, 0), (1, 0), (3, 0)}, {(1, 0)})
    1
    """
    empty = set(interior) - set(occupied)
    best = 0
    while empty:
        todo = [empty.pop()]
        size = 1
        while todo:
            x, y = todo.pop()
            for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if n in empty:
                    empty.remove(n)
                    todo.append(n)
                    size += 1
        best = max(best, size)
    return best


def doubling(feature: Feature, seat: int, *, wall_tile: bool = False) -> str | None:
    """What doubles ``seat``'s points for ``feature``: its own ``"prince"`` standing on it, else a
    doubling ``"wall_tile"`` it played on it; ``None``. A feature is doubled at most once (Falcon
    rules), so the prince leaves no room for a wall tile. The one place the prince's doubling is
    decided: during the game, for courts at the end, for an incomplete-feature wall tile, and for
    which wall tiles may be played."""
    if any(f.owner == seat and f.kind == "prince" for f in feature.followers):
        return "prince"
    return "wall_tile" if wall_tile else None


def doubled_points(points: int, doubled_by: str | None) -> int:
    return points * PRINCE_FACTOR if doubled_by else points


def scorers(state: CastleState, feature: Feature) -> tuple[int, ...]:
    """Seats scoring a completed feature, the active seat first."""
    winners = controllers(feature.followers, ties_score=state.options.ties_score)
    return tuple(sorted(winners, key=lambda s: s != state.active))


def completed_feature(state: CastleState, ref: FeatureRef) -> Feature:
    """The feature a reference the engine itself wrote names."""
    x, y, at = ref
    assert state.board is not None
    feature = feature_at(state.board, x, y, at)
    assert feature is not None
    return feature


def completed_by_placement(board: Board, x: int, y: int) -> tuple[FeatureRef, ...]:
    """Every path, house, tower and chapel the tile at (x, y) completed: its own features and the
    buildings of other kinds it closed from outside (only paths must match, so a court tile
    closes a house it faces without joining it). Each is named by its first segment found, on
    the placed tile when it has one there (:meth:`Board.features_around`)."""
    cells = board.cells
    return tuple([
        (sx, sy, segment_name(cells[(sx, sy)], seg))
        for (sx, sy, seg), feature in board.features_around(x, y, complete=True)
        if feature.kind in SCORED_KINDS
    ])


# --- scoring on the wall ------------------------------------------------------------------------


class Emitter(Protocol):
    """What the scoring steps need from the running command."""

    engine: CastleTables
    rng: Rng

    @property
    def state(self) -> CastleState: ...

    def __call__(self, type_: str, **payload: Any) -> None: ...


def score_feature(em: Emitter, ref: FeatureRef) -> None:
    """Score one completed feature: points (doubled by the prince or a wall tile), the markers,
    aerie tokens (Falcon), the keep."""
    state = em.state
    x, y, at = ref
    feature = completed_feature(state, ref)
    winners = scorers(state, feature)
    base = feature_points(feature.kind, tiles=feature.tile_count, fountains=feature.count("fountain"))
    points, aeries = [0, 0], [0, 0]
    doubled: list[str | None] = [None, None]
    for seat in winners:
        doubled[seat] = doubling(feature, seat, wall_tile=seat == state.active and ref in state.doubled)
        points[seat] = doubled_points(base, doubled[seat])
        if state.options.falcon:
            aeries[seat] = feature.count("aeries") + sum(
                1 for f in feature.followers if f.owner == seat and f.kind == "falconer"
            )
    em(
        "feature_scored",
        seat=state.active,
        feature=at,
        x=x,
        y=y,
        kind=feature.kind,
        tiles=[list(c) for c in sorted(feature.cells)],
        base=base,
        winners=list(winners),
        points=points,
        doubled=doubled,
        aeries=aeries,
    )
    for seat in winners:
        move_marker(em, seat, points[seat])
        if aeries[seat]:
            take_aeries(em, seat, aeries[seat])
        keep = em.state.seats[seat].keep
        if feature.kind == "house" and (keep is None or feature.tile_count > keep.size):
            em("keep_moved", seat=seat, size=feature.tile_count, tiles=[list(c) for c in sorted(feature.cells)])


def move_marker(em: Emitter, seat: int, points: int, *, final: bool = False) -> None:
    """Move ``seat``'s marker; ending exactly on a corner tower that still holds a wall tile
    takes it (drawn now, face up), except in the final scoring."""
    if points <= 0:
        return
    state = em.state
    wall = em.engine.wall(state)
    marker = state.seats[seat].marker
    step = wall.advance(marker, points, halt_at_gates=state.options.halt_at_gates and not final)
    em(
        "marker_moved",
        seat=seat,
        points=points,
        **{"from": marker.score},
        to=step.end.score,
        gate=step.end.gate,
        lost=step.lost,
    )
    if final or step.tower is None or not em.state.towers[step.tower]:
        return
    kind = draw(em.rng, em.state.wall_pool, deck=WALL_TILES, contents=em.engine.wall_tiles)
    info = em.engine.wall_tile_info(kind)
    em("wall_tile_taken", seat=seat, tower=step.tower, spaces=list(em.engine.dataset.track.towers[step.tower].spaces),
       **info)


def take_aeries(em: Emitter, seat: int, count: int) -> None:
    """``seat`` earns ``count`` aerie tokens. Only who holds more matters (Falcon rules): when
    the 12 run out both hand back the same number, as few as make room, so the difference of
    held tokens stays the difference earned. Each can hand back only what it holds (the earner
    what it holds once it has taken); past that (a lead above 12) the tokens are counted beyond
    the 12 on the table. The earner hands back first when it holds enough, else it takes first."""
    held = [s.aeries for s in em.state.seats]
    excess = sum(held) + count - em.engine.dataset.aerie_tokens
    each = min(held[1 - seat], held[seat] + count, -(-excess // 2)) if excess > 0 else 0
    if each and held[seat] >= each:
        em("aeries_returned", each=each)
        each = 0
    em("aeries_taken", seat=seat, count=count)
    if each:
        em("aeries_returned", each=each)


# --- the final scoring ----------------------------------------------------------------------------


def final_scoring(em: Emitter) -> None:
    """Keep, courts, incomplete-feature wall tiles, flat points, the aerie bonus; ``game_ended``."""
    state = em.state
    board = state.board
    assert board is not None
    area = largest_empty_area(em.engine.board_rules(state.options.falcon).interior, board.cells)
    features = sorted(board.all_features(), key=lambda f: min(f.segments))
    _score_keeps(em, area)
    _score_courts(em, features)
    _score_incomplete(em, features)
    _score_flat_points(em)
    if state.options.falcon:
        _score_aeries(em, area)
    scores = [em.state.seats[s].marker.score for s in (0, 1)]
    best = max(scores)
    em("game_ended", scores=scores, winners=[s for s in (0, 1) if scores[s] == best])


def _held(em: Emitter, seat: int, effect: WallEffect) -> list[WallTileKind]:
    kinds = (em.engine.wall_tile_kind(h.kind) for h in em.state.seats[seat].wall_tiles)
    return [k for k in kinds if k.effect is effect]


def _score_keeps(em: Emitter, area: int) -> None:
    """The larger keep (wall tiles add to it) scores the largest empty area."""
    values: list[int | None] = []
    for seat in (0, 1):
        keep = em.state.seats[seat].keep
        bonus = sum(k.points or 0 for k in _held(em, seat, WallEffect.KEEP_VALUE))
        values.append(None if keep is None else keep.size + bonus)
    keep_winner = _strictly_larger(values)
    if keep_winner is not None:
        em("final_scored", item="keep", seat=keep_winner, points=area, values=values, empty_area=area)
        move_marker(em, keep_winner, area, final=True)


def _score_courts(em: Emitter, features: list[Feature]) -> None:
    """3 per market for the merchant majority (ties score nothing); a market wall tile lifts one
    court's markets, the prince doubles its owner's court."""
    courts = []
    for f in features:
        if f.kind != "court" or not f.followers:
            continue
        winners = controllers(f.followers, ties_score=False)
        if winners:
            courts.append((f, winners[0]))
    for seat in (0, 1):
        own = [(f, doubling(f, seat)) for f, w in courts if w == seat]
        lifts = sorted((k.points or MARKET_POINTS for k in _held(em, seat, WallEffect.MARKET_VALUE)), reverse=True)
        own.sort(key=lambda fd: doubled_points(fd[0].count("markets"), fd[1]), reverse=True)
        for i, (f, doubled_by) in enumerate(own):
            per_market = max(MARKET_POINTS, lifts[i]) if i < len(lifts) else MARKET_POINTS
            points = doubled_points(court_points(f.count("markets"), per_market), doubled_by)
            em(
                "final_scored", item="court", seat=seat, points=points, markets=f.count("markets"),
                per_market=per_market, doubled=doubled_by, tiles=[list(c) for c in sorted(f.cells)],
            )
            move_marker(em, seat, points, final=True)


def _score_incomplete(em: Emitter, features: list[Feature]) -> None:
    """Wall tiles that score one incomplete feature of one's own (the best one each)."""
    ties_score = em.state.options.ties_score
    for seat in (0, 1):
        used: set[int] = set()
        for kind in _held(em, seat, WallEffect.INCOMPLETE):
            best: tuple[int, Feature] | None = None
            for f in features:
                if f.kind != kind.feature or f.complete or f.id in used:
                    continue
                if seat not in controllers(f.followers, ties_score=ties_score):
                    continue
                base = feature_points(f.kind, tiles=f.tile_count, fountains=f.count("fountain"))
                points = doubled_points(base, doubling(f, seat))
                if best is None or points > best[0]:
                    best = (points, f)
            if best is None:
                continue
            points, f = best
            used.add(f.id)
            em("final_scored", item="incomplete", seat=seat, points=points, tile=kind.name, kind=f.kind,
               tiles=[list(c) for c in sorted(f.cells)])
            move_marker(em, seat, points, final=True)


def _score_flat_points(em: Emitter) -> None:
    for seat in (0, 1):
        for kind in _held(em, seat, WallEffect.FLAT_POINTS):
            em("final_scored", item="flat_points", seat=seat, points=kind.points, tile=kind.name)
            move_marker(em, seat, kind.points or 0, final=True)


def _score_aeries(em: Emitter, area: int) -> None:
    """Falcon: more aerie tokens score the largest empty area; a tie scores nothing."""
    counts: list[int | None] = [em.state.seats[s].aeries for s in (0, 1)]
    aerie_winner = _strictly_larger(counts)
    if aerie_winner is not None:
        em("final_scored", item="aeries", seat=aerie_winner, points=area, values=counts, empty_area=area)
        move_marker(em, aerie_winner, area, final=True)


def _strictly_larger(values: list[int | None]) -> int | None:
    """The seat with the strictly larger value; ``None`` on a tie or when neither has one."""
    a, b = values
    if a is None and b is None:
        return None
    if b is None or (a is not None and a > b):
        return 0
    if a is None or b > a:
        return 1
    return None
