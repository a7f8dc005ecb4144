"""Carcassonne engine benchmark: complete random-bot games per second and legal-move timing.

Run ``python -m bench.carcassonne``. Everything runs in the pure engine on one core:
setup, ``legal_moves`` for the bot, ``decide`` and ``evolve`` for every command, nothing else.
"""

from __future__ import annotations

import time
from typing import Any

from games.base import play_out, play_steps
from games.carcassonne import ENGINE
from games.carcassonne.bots import RANDOM
from games.carcassonne.engine import CarcassonneBoardRules
from games.carcassonne.state import State
from games.tileboard import Board

__all__ = ["figures", "play_one"]




def play_one(seed: int, seats: int = 2, **options: Any) -> State:
    """One complete random-bot game."""
    return play_out(ENGINE, seats, options, RANDOM, seed)[0]


def games_per_second(games: int, **options: Any) -> float:
    # Warm the placement memo (about 10k (tile, constraint) entries once saturated), as a
    # long-running server has it; the first ~20 games of a fresh process run ~25% slower.
    for seed in range(20):
        play_one(10_000 + seed, **options)
    start = time.perf_counter()
    for seed in range(games):
        play_one(seed, **options)
    return games / (time.perf_counter() - start)


def board_of(tiles: int, seed: int = 1) -> State:
    """A state in a random I&C game whose board holds ``tiles`` tiles, at a tile-placing step."""
    for state, _, _ in play_steps(ENGINE, 2, {"inns_cathedrals": True}, RANDOM, seed):
        if state.board is not None and len(state.board) >= tiles and state.phase.value == "place_tile":
            return state
    raise RuntimeError("the game ended before the board was big enough")


def legal_timing(state: State, rounds: int = 20, *, cold: bool = False) -> tuple[float, float, int]:
    """Mean seconds to list one tile's legal placements, and to list them, place the first and
    list its follower spots; averaged over every tile design. Also the mean placement count."""
    tiles = list(state.options.tiles.tiles.values())
    board = state.table
    only_list = with_spots = 0.0
    placements = 0
    for _ in range(rounds):
        if cold:
            board = Board(CarcassonneBoardRules(), board.cells, board.seg_feature, board.features,
                          board.frontier, board.next_id)
        for tile in tiles:
            t0 = time.perf_counter()
            legal = board.legal_placements(tile)
            t1 = time.perf_counter()
            if legal:
                x, y, r = legal[0]
                board.place(tile, x, y, r, check=False).free_segments(x, y)
            t2 = time.perf_counter()
            only_list += t1 - t0
            with_spots += t2 - t0
            placements += len(legal)
    n = rounds * len(tiles)
    return only_list / n, with_spots / n, placements // n


def figures() -> dict[str, str]:
    base = games_per_second(60)
    expansion = games_per_second(60, inns_cathedrals=True)
    state = board_of(80)
    warm_list, warm_spots, count = legal_timing(state)
    cold_list, _, _ = legal_timing(state, rounds=5, cold=True)
    return {
        "carcassonne.random_2p_games_per_s": f"{base:.0f}",
        "carcassonne.random_2p_games_per_s.inns_cathedrals": f"{expansion:.0f}",
        "carcassonne.legal_placements_80_tiles_ms": f"{warm_list * 1e3:.3f}",
        "carcassonne.legal_placements_80_tiles_cold_memo_ms": f"{cold_list * 1e3:.3f}",
        "carcassonne.legal_placements_plus_follower_spots_80_tiles_ms": f"{warm_spots * 1e3:.3f}",
        "carcassonne.frontier_cells_80_tiles": str(len(state.table.frontier)),
        "carcassonne.mean_legal_placements_per_tile_80_tiles": str(count),
    }


if __name__ == "__main__":
    for name, value in figures().items():
        print(f"{name}: {value}")
