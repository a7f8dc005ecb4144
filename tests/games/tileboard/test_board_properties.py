"""The board's incremental bookkeeping equals a recomputation from its cells, over seeded games.

``Board.place`` updates features, open ports and the frontier incrementally (only what the new
tile touches); these checks recompute each from ``board.cells`` alone after every placement of
random Carcassonne and Castle games.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import find_engine
from games.base import fold
from games.carcassonne.board import board_rules as carcassonne_rules
from games.carcassonne.tiles import tile_set as carcassonne_tile_set
from games.castle.engine import CastleEngine
from games.tileboard import SIDE_OFFSETS, WALL, Board, mirror_port
from service.fairness.draw_schemes import LegacyRandom


def frontier_from_cells(board: Board) -> dict:
    rules, cells = board.rules, board.cells
    out = {}
    for (x, y) in cells:
        for dx, dy in SIDE_OFFSETS:
            n = (x + dx, y + dy)
            if n in cells or not rules.is_playable(*n):
                continue
            constraint = []
            for side, (ex, ey) in enumerate(SIDE_OFFSETS):
                other = cells.get((n[0] + ex, n[1] + ey))
                if other is not None:
                    constraint.append(rules.facing_keys(other.tile)[other.rotation // 90][(side + 2) % 4])
                else:
                    constraint.append(None if rules.is_playable(n[0] + ex, n[1] + ey) else WALL)
            out[n] = tuple(constraint)
    return out


def features_from_cells(board: Board) -> set[frozenset]:
    """Connected components of joined segments, found by flood fill."""
    cells, joins = board.cells, board.rules.joins
    seen: set = set()
    components = set()
    for (x, y), placed in cells.items():
        for i in range(len(placed.tile.segments)):
            if (x, y, i) in seen:
                continue
            todo, part = [(x, y, i)], {(x, y, i)}
            while todo:
                cx, cy, ci = todo.pop()
                here = cells[(cx, cy)]
                for p in here.segment_ports(ci):
                    dx, dy = SIDE_OFFSETS[p // 3]
                    other = cells.get((cx + dx, cy + dy))
                    if other is None:
                        continue
                    j = other.ports[mirror_port(p)]
                    if j is None or not joins(here.tile.segments[ci].kind, other.tile.segments[j].kind):
                        continue
                    ref = (other.x, other.y, j)
                    if ref not in part:
                        part.add(ref)
                        todo.append(ref)
            seen |= part
            components.add(frozenset(part))
    return components


def check(board: Board) -> None:
    assert board.frontier == frontier_from_cells(board)
    assert {f.segments for f in board.all_features()} == features_from_cells(board)
    for feature in board.all_features():
        assert feature.open_ports == len(board.open_ports(feature))
        assert feature.cells == frozenset((x, y) for x, y, _ in feature.segments)
        assert all(board.seg_feature[ref] == feature.id for ref in feature.segments)


def boards_of_a_game(engine, options, seed: int) -> list[Board]:
    rng = LegacyRandom(seed)
    state = fold(engine, engine.setup(options, 2, rng))
    boards = [state.board]
    while not engine.is_terminal(state):
        seat = state.current if hasattr(state, "current") else state.active
        cmd = rng.choice(engine.legal_moves(state, seat))
        for event in engine.decide(state, seat, cmd, rng):
            state = engine.evolve(state, event)
            if event.type == "tile_placed":
                boards.append(state.board)
    return boards


@pytest.mark.parametrize("game, expansion", [("carcassonne", "inns_cathedrals"), ("castle", "falcon")])
@settings(deadline=None, max_examples=4, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), with_expansion=st.booleans())
def test_boards_of_random_games_match_a_recomputation(game, expansion, seed, with_expansion):
    engine = find_engine(game)
    boards = boards_of_a_game(engine, {expansion: with_expansion}, seed)
    for board in boards[::3] + boards[-1:]:
        check(board)


def _walked_edge(rules, tile, turns, side, other, rotation):
    """What the edge between two placed tiles joins, port by port from the tiles themselves:
    the walk that ``BoardRules.edges`` remembers."""
    mine, theirs = tile.rotated[turns], other.rotated[rotation // 90]
    facing: dict[int, int] = {}
    joined: list[tuple[int, int]] = []
    for port in range(3 * side, 3 * side + 3):
        their_segment = theirs[mirror_port(port)]
        if their_segment is None:
            continue
        facing[their_segment] = facing.get(their_segment, 0) + 1
        my_segment = mine[port]
        if my_segment is not None and rules.joins(tile.segments[my_segment].kind, other.segments[their_segment].kind):
            joined.append((my_segment, their_segment))
    return tuple(facing.items()), tuple(joined)


def _tiles_and_rules(game):
    if game == "carcassonne":
        tiles = carcassonne_tile_set(True, "east")
        return list(tiles.tiles.values()), carcassonne_rules(tiles)
    engine = find_engine("castle")
    assert isinstance(engine, CastleEngine)
    rules = engine.board_rules(True)
    return [*engine.tile_set(True), *(start.tile for start in rules.shape.start_spaces)], rules


@pytest.mark.parametrize("game", ["carcassonne", "castle"])
def test_the_edge_memo_answers_what_walking_every_pair_of_facing_sides_finds(game):
    tiles, rules = _tiles_and_rules(game)
    pairs = 0
    for tile in tiles:
        for turns in range(4):
            for side in range(4):
                for other in tiles:
                    for rotation in (0, 90, 180, 270):
                        key = (rules.side_ids[tile][turns][side], rules.side_ids[other][rotation // 90][(side + 2) % 4])
                        assert rules.edges[key] == _walked_edge(rules, tile, turns, side, other, rotation)
                        pairs += 1
    assert pairs > 10_000
    assert len(rules.edges) < pairs / 20  # tiles share sides, so the memo stays small
