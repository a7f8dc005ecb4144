"""Two Carcassonne bots that play only through ``legal_moves``: random and greedy.

``BOTS`` names them (``{"random": RANDOM, "greedy": GREEDY}``), each a :class:`games.base.Bot`
with ``name`` and ``choose(state, seat, rng) -> command``: what the service seats. The functions
:func:`random_choose` and :func:`greedy_choose` are the same choices for harnesses that want a
plain function, and :func:`choose` is the default bot (greedy). All are pure given the rng.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.base import Bot, Rng
from games.carcassonne.engine import ENGINE
from games.carcassonne.scoring import segment_at, weight
from games.carcassonne.state import State
from games.carcassonne.tiles import CITY, FIELD, MONASTERY, ROAD
from games.tileboard import Board, Feature, majority

__all__ = ["BOTS", "GREEDY", "RANDOM", "GreedyBot", "RandomBot", "choose", "greedy_choose", "random_choose"]

Command = dict[str, Any]


def random_choose(state: State, seat: int, rng: Rng) -> Command:
    """A uniformly random legal command."""
    return rng.choice(ENGINE.legal_moves(state, seat))


def _value(board: Board, feature: Feature, seat: int) -> float:
    """What a feature is worth to ``seat`` now, roughly: its points if ``seat`` leads it."""
    if feature.followers and seat not in majority(feature.followers, weight):
        return 0.0
    tiles = feature.tile_count
    if feature.kind == CITY:
        per = 3 if feature.count("cathedral") else 2
        return per * (tiles + feature.count("pennant")) * (1.0 if feature.complete else 0.6)
    if feature.kind == ROAD:
        per = 2 if feature.count("inn") else 1
        return per * tiles * (1.0 if feature.complete else 0.7)
    if feature.kind == MONASTERY:
        (x, y), = feature.cells
        return 1.0 + len(board.neighbours8(x, y))
    if feature.kind == FIELD:
        done = sum(1 for fid in board.touching_features(feature)
                   if board.features[fid].kind == CITY and board.features[fid].complete)
        return 3.0 * done * 0.8
    return 0.0


def greedy_choose(state: State, seat: int, rng: Rng) -> Command:
    """Place where the tile raises the value of features this seat leads the most, then put a
    follower where it is worth the most (passing when nothing is worth a follower)."""
    moves = ENGINE.legal_moves(state, seat)
    if not moves:
        raise ValueError(f"seat {seat} has nothing to do")
    if moves[0]["type"] == "place_tile":
        tile = state.options.tiles.tiles[state.tile_to_place]
        best: list[tuple[int, int, int]] = []
        best_score = float("-inf")
        for x, y, r in state.table.legal_placements(tile, distinct=True):
            board = state.table.place(tile, x, y, r, check=False)
            score = 0.0
            for f in board.features_on(x, y):
                if f.followers:
                    mine = seat in majority(f.followers, weight)
                    score += _value(board, f, seat) if mine else -0.5 * f.tile_count
                else:
                    score += 0.3 * _value(board, f, seat)
            for cx, cy in board.neighbours8(x, y):
                for f in board.features_on(cx, cy):
                    if f.kind == MONASTERY and f.followers:
                        score += 1.0 if seat in majority(f.followers, weight) else -1.0
            if score > best_score:
                best, best_score = [(x, y, r)], score
            elif score == best_score:
                best.append((x, y, r))
        x, y, r = rng.choice(best)
        return {"type": "place_tile", "args": {"x": x, "y": y, "rotation": r}}
    x, y = state.placed_at
    placed = state.table.cells[(x, y)]
    normal, _large = state.supply[seat]
    best_cmd, best_value = {"type": "pass", "args": {}}, 2.5 if normal > 2 else 5.0
    for cmd in moves:
        if cmd["type"] != "place_follower":
            continue
        segment = segment_at(placed, cmd["args"]["at"])
        assert segment is not None  # a legal move names a segment of the placed tile
        feature = state.table.feature_of(x, y, segment)
        value = _value(state.table, feature, seat)
        if cmd["args"]["kind"] == "large":
            value -= 1.0  # keep the large follower for contested features
        if feature.kind == FIELD:
            value -= 1.0  # farmers never come back
        if value > best_value:
            best_cmd, best_value = cmd, value
    return best_cmd


class RandomBot:
    """Uniformly random among the legal commands (see :func:`random_choose`)."""

    name = "random"

    def choose(self, state: State, seat: int, rng: Rng) -> Command:
        return random_choose(state, seat, rng)


class GreedyBot:
    """One step greedy (see :func:`greedy_choose`)."""

    name = "greedy"

    def choose(self, state: State, seat: int, rng: Rng) -> Command:
        return greedy_choose(state, seat, rng)


RANDOM = RandomBot()
GREEDY = GreedyBot()
BOTS: Mapping[str, Bot] = {"random": RANDOM, "greedy": GREEDY}
"""The named bots: what the service offers to fill seats."""


def choose(state: State, seat: int, rng: Rng) -> Command:
    """The default bot: greedy."""
    return greedy_choose(state, seat, rng)
