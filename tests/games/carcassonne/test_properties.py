"""Properties over many seeded random games, for every player count, with and without I&C."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.base import fold
from games.carcassonne import ENGINE, recount
from games.carcassonne.bots import greedy_choose, random_choose
from games.carcassonne.state import State
from games.tileboard import SIDE_OFFSETS, mirror_port
from service.fairness.draw_schemes import LegacyRandom
from tests.games.carcassonne.play import Game, play_random

CONFIGS = [(n, False) for n in range(2, 6)] + [(n, True) for n in range(2, 7)]
VIEW_KEYS = {"game", "phase", "seats", "current", "tile", "placed", "board", "remaining", "remaining_by_tile",
             "discarded", "scores", "supply", "options", "winners", "legal"}
seeds = st.integers(min_value=0, max_value=2**32 - 1)


class Watcher:
    """Checks invariants after every command's events and keeps snapshots for replay checks."""

    def __init__(self, large: int) -> None:
        self.large = large
        self.last_scores: tuple[int, ...] | None = None
        self.snapshots: list[tuple[int, State, dict]] = []

    def __call__(self, game: Game, new_events) -> None:
        state = game.state
        for e in new_events:
            if e.type == "feature_scored":
                assert e.payload["points"] >= 0
        if self.last_scores is not None:
            assert all(a >= b for a, b in zip(state.scores, self.last_scores))
        self.last_scores = state.scores
        on_board = [(f.owner, f.kind) for f in state.board.followers()]
        for seat, (normal, large) in enumerate(state.supply):
            assert normal + on_board.count((seat, "normal")) == 7
            assert large + on_board.count((seat, "large")) == self.large
        if len(self.snapshots) < 6 or LegacyRandom(len(game.events)).random() < 0.05:
            self.snapshots.append((len(game.events), state, ENGINE.view(state, 0)))


def check_board(state: State) -> None:
    cells = state.board.cells
    for (x, y), placed in cells.items():
        for side, (dx, dy) in enumerate(SIDE_OFFSETS):
            other = cells.get((x + dx, y + dy))
            if other is None:
                continue
            for p in range(3 * side, 3 * side + 3):
                mine = placed.tile.segments[placed.ports[p]].kind
                theirs = other.tile.segments[other.ports[mirror_port(p)]].kind
                assert mine == theirs, (placed, other, p)


def check_game(game: Game, watcher: Watcher) -> None:
    state = game.state
    assert ENGINE.is_terminal(state)
    placed = [(e.payload["x"], e.payload["y"]) for e in game.events if e.type == "tile_placed"]
    assert len(placed) == len(set(placed)) == len(state.board.cells) - 1
    assert (0, 0) not in placed
    check_board(state)
    assert recount(state) == list(state.scores)
    ended = game.events[-1]
    assert ended.type == "game_ended" and ended.payload["scores"] == list(state.scores)
    assert state.remaining == 0
    assert fold(ENGINE, game.events) == state
    for count, snapshot, view in watcher.snapshots:
        assert fold(ENGINE, game.events[:count]) == snapshot
        assert ENGINE.view(snapshot, 0) == view  # nothing mutated the old state since
    for viewer in [None, *range(state.seats)]:
        assert ENGINE.redact(game.events[0], viewer).payload["tile_order"] is None


@pytest.mark.parametrize("seats, ic", CONFIGS)
@settings(deadline=None, max_examples=20, derandomize=True)
@given(seed=seeds, farmers=st.booleans())
def test_random_games_keep_every_invariant(seats, ic, seed, farmers):
    watcher = Watcher(1 if ic else 0)
    game = play_random(seats, seed, random_choose, observe=watcher, inns_cathedrals=ic, farmers=farmers)
    check_game(game, watcher)


@settings(deadline=None, max_examples=6, derandomize=True)
@given(seed=seeds, ic=st.booleans())
def test_greedy_games_keep_every_invariant(seed, ic):
    watcher = Watcher(1 if ic else 0)
    game = play_random(2, seed, greedy_choose, observe=watcher, inns_cathedrals=ic)
    check_game(game, watcher)
    assert max(game.state.scores) > 40  # the greedy bot actually scores


def _views(state: State) -> list[str]:
    return [json.dumps(ENGINE.view(state, v), sort_keys=True) for v in [None, *range(state.seats)]]


@settings(deadline=None, max_examples=8, derandomize=True)
@given(seed=seeds, ic=st.booleans())
def test_views_do_not_depend_on_the_order_of_the_remaining_tiles(seed, ic):
    """With a secret tile_order, reshuffling what is left changes no view at any point."""
    rng = LegacyRandom(seed)
    counts = ENGINE._options({"inns_cathedrals": ic}, 2).tiles.pile_counts()
    order = [tid for tid, n in counts.items() for _ in range(n)]
    rng.shuffle(order)
    order = order[: rng.randrange(10, len(order))]

    def observe(game: Game, _events) -> None:
        state = game.state
        views = _views(state)
        for v in views:
            assert set(json.loads(v)) <= VIEW_KEYS
        if state.order and len(state.order) > 1:
            shuffled = list(state.order)
            LegacyRandom(len(game.events)).shuffle(shuffled)
            assert _views(state.but(order=tuple(shuffled))) == views
            assert json.dumps(list(state.order)) not in "".join(views)

    game = play_random(2, seed, random_choose, observe=observe, inns_cathedrals=ic, tile_order=order)
    assert ENGINE.is_terminal(game.state)
    assert recount(game.state) == list(game.state.scores)
