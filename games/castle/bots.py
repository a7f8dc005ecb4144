"""Two bots that play using only ``legal_moves``: a random one and a greedy scorer.

``BOTS`` names them (``{"random": RANDOM, "greedy": GREEDY}``), each a :class:`games.base.Bot`
(the contract every game's bots keep: ``name`` and ``choose(state, seat, rng)`` for a seat that
owes a command). The service fills seats from ``BOTS``; ``choose`` is the default bot (greedy).
Both return one of the commands ``engine.legal_moves(state, seat)`` lists, so they double as a
check that a client can play from ``legal`` alone.

A Castle bot reads tiles from its engine's dataset, so each bot object is bound to an engine:
``BOTS`` to the shipped ``ENGINE``, and :func:`bots_for` builds the same bots for an engine over
an operator's dataset. The functions :func:`random_bot` and :func:`greedy_bot` take the engine
explicitly (``(engine, state, seat, rng)``) for harnesses that already hold one.

The greedy bot looks one step ahead: it places the tile where the features completed at once
(its own and the buildings it closes from outside) bring it the most points (counting a follower
it could still put on a completed, empty feature of the tile), puts followers where they score now
or on the feature worth the most so far (courts
by their markets), scores its features in an order that lands on a corner tower when one can,
and always plays its doubling and extra-turn wall tiles.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from games.base import Bot, Rng
from games.castle.legal import placed_tile
from games.castle.scoring import PRINCE_FACTOR, completed_feature, controllers, feature_points
from games.castle.state import CastleState, Phase
from games.tileboard import Feature, feature_at

if TYPE_CHECKING:
    from games.castle.engine import CastleEngine

__all__ = [
    "RandomBot",
    "GreedyBot",
    "RANDOM",
    "GREEDY",
    "BOTS",
    "bots_for",
    "choose",
    "random_choose",
    "greedy_choose",
    "random_bot",
    "greedy_bot",
]

Command = dict[str, Any]


def random_bot(engine: CastleEngine, state: CastleState, seat: int, rng: Rng) -> Command:
    """A uniformly random legal command.

    For a tile it picks among the board's placements directly instead of building all the
    command objects first: the same choice, which ``legal_moves`` would list in the same order.
    """
    if state.phase is Phase.PLACE_TILE and seat == state.active and state.tile is not None:
        assert state.board is not None  # a game that waits for a tile has a board
        x, y, rotation = rng.choice(state.board.legal_placements(engine.dataset.tile(state.tile)))
        return {"type": "place_tile", "args": {"x": x, "y": y, "rotation": rotation}}
    return rng.choice(engine.legal_moves(state, seat))


def greedy_bot(engine: CastleEngine, state: CastleState, seat: int, rng: Rng) -> Command:
    """A one-step-greedy legal command (ties broken at random)."""
    moves = engine.legal_moves(state, seat)
    if len(moves) == 1:
        return moves[0]
    if state.phase is Phase.PLACE_TILE:
        return _best(moves, lambda m: _placement_value(engine, state, seat, m), rng)
    if state.phase is Phase.PLACE_FOLLOWER:
        return _best(moves, lambda m: _follower_value(engine, state, seat, m), rng)
    for move in moves:
        if move["type"] == "use_wall_tile":
            return move
    if state.phase is Phase.SCORE:
        return _best(moves, lambda m: _lands_on_tower(engine, state, seat, m), rng)
    return moves[-1]


def _best(moves: list[Command], value: Callable[[Command], float], rng: Rng) -> Command:
    scored = [(value(m), i) for i, m in enumerate(moves)]
    top = max(v for v, _ in scored)
    return moves[rng.choice([i for v, i in scored if v == top])]


def _points(feature: Feature) -> int:
    return feature_points(feature.kind, tiles=feature.tile_count, fountains=feature.count("fountain"))


def _placement_value(engine: CastleEngine, state: CastleState, seat: int, move: Command) -> float:
    args = move["args"]
    assert state.board is not None and state.tile is not None  # asked only while a tile waits to be placed
    tile = engine.dataset.tile(state.tile)
    board = state.board.place(tile, args["x"], args["y"], args["rotation"], check=False)
    value = 0.0
    best_free = 0
    has_follower = state.seats[seat].followers > 0
    here = (args["x"], args["y"])
    # The tile's own features, then the buildings it closes from outside without joining them.
    for (x, y, _), feature in board.features_around(*here):
        on_tile = (x, y) == here
        if feature.kind == "court":
            value += 0.1 * feature.count("markets") if on_tile and not feature.followers else 0
            continue
        if not feature.complete:
            continue
        if not feature.followers:
            if has_follower and on_tile:
                best_free = max(best_free, _points(feature))
            continue
        winners = controllers(feature.followers, ties_score=state.options.ties_score)
        if seat in winners:
            value += _points(feature)
        elif winners:
            value -= _points(feature)
    return value + best_free


def _follower_value(engine: CastleEngine, state: CastleState, seat: int, move: Command) -> float:
    if move["type"] == "pass":
        return 0.5 if state.seats[seat].followers > 2 else 1.5
    placed = placed_tile(state)
    assert state.board is not None  # placed_tile found the tile on it
    feature = feature_at(state.board, placed.x, placed.y, move["args"]["at"])
    kind = move["args"]["kind"]
    if feature is None:
        return 0.0
    if feature.kind == "court":
        return 3.0 * feature.count("markets") - (3 if kind != "normal" else 0)
    points = _points(feature)
    if feature.complete:
        return 100.0 + points
    falconer = 1 if kind == "falconer" else 0
    bonus = float(PRINCE_FACTOR * points) if kind == "prince" else feature.count("aeries") + falconer
    return 1.0 + points + bonus


def _lands_on_tower(engine: CastleEngine, state: CastleState, seat: int, move: Command) -> int:
    if move["type"] != "score":
        return 0
    args = move["args"]
    placed = placed_tile(state)
    feature = completed_feature(state, (args.get("x", placed.x), args.get("y", placed.y), args["feature"]))
    marker = state.seats[seat].marker
    step = engine.wall(state).advance(marker, _points(feature))
    return 1 if step.tower is not None and state.towers[step.tower] else 0


class RandomBot:
    """Uniformly random among the legal commands (see :func:`random_bot`)."""

    name = "random"

    def __init__(self, engine: CastleEngine) -> None:
        self.engine = engine

    def choose(self, state: CastleState, seat: int, rng: Rng) -> Command:
        return random_bot(self.engine, state, seat, rng)


class GreedyBot:
    """One step greedy (see :func:`greedy_bot`)."""

    name = "greedy"

    def __init__(self, engine: CastleEngine) -> None:
        self.engine = engine

    def choose(self, state: CastleState, seat: int, rng: Rng) -> Command:
        return greedy_bot(self.engine, state, seat, rng)


def bots_for(engine: CastleEngine) -> Mapping[str, Bot]:
    """The named bots, bound to ``engine`` (an engine over an operator's dataset, say)."""
    return {"random": RandomBot(engine), "greedy": GreedyBot(engine)}


def _shipped_engine() -> CastleEngine:
    from games.castle import ENGINE

    return ENGINE


BOTS: Mapping[str, Bot] = bots_for(_shipped_engine())
"""The named bots on the shipped dataset: what the service offers to fill seats."""
RANDOM = BOTS["random"]
GREEDY = BOTS["greedy"]


def random_choose(state: CastleState, seat: int, rng: Rng) -> Command:
    """A uniformly random legal command for ``seat`` (shipped dataset)."""
    return RANDOM.choose(state, seat, rng)


def greedy_choose(state: CastleState, seat: int, rng: Rng) -> Command:
    """The greedy bot's command for ``seat`` (shipped dataset)."""
    return GREEDY.choose(state, seat, rng)


def choose(state: CastleState, seat: int, rng: Rng) -> Command:
    """The default bot: greedy."""
    return GREEDY.choose(state, seat, rng)
