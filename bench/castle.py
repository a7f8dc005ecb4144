"""The Castle engine benchmark: complete random-bot games per second and legal-move timing.

Run ``python -m bench.castle``. Everything runs in the pure engine on one core: setup,
``legal_moves`` for the bot, ``decide`` and ``evolve`` for every command, nothing else.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from games.base import Bot, play_steps
from games.castle import ENGINE
from games.castle.bots import GREEDY, RANDOM
from games.castle.state import CastleState, Phase

__all__ = ["figures", "play_one"]




def play_one(
    seed: int, bots: tuple[Bot, Bot] = (RANDOM, RANDOM), **options: Any
) -> tuple[CastleState, list[CastleState]]:
    """One complete game; also returns the states where a tile was waiting to be placed."""
    steps = play_steps(ENGINE, 2, options, bots, seed)
    placing: list[CastleState] = []
    while True:
        try:
            state, _, _ = next(steps)
        except StopIteration as done:
            return done.value, placing
        if state.phase is Phase.PLACE_TILE:
            placing.append(state)


def games_per_second(games: int, bots: tuple[Bot, Bot] = (RANDOM, RANDOM), **options: Any) -> float:
    for seed in range(5):  # warm the placement memo, as a long-running server has it
        play_one(10_000 + seed, bots, **options)
    start = time.perf_counter()
    for seed in range(games):
        play_one(seed, bots, **options)
    return games / (time.perf_counter() - start)


def placement_listing(games: int = 5, repeat: int = 20) -> tuple[float, float, int]:
    """Mean and worst time (seconds) to list every legal placement of the drawn tile, over
    the boards of a few Falcon games (0 to 77 tiles placed), and the mean number listed."""
    times, counts = [], []
    for seed in range(games):
        _, placing = play_one(20_000 + seed, falcon=True)
        for state in placing:
            start = time.perf_counter()
            for _ in range(repeat):
                moves = ENGINE.tile_placements(state)
            times.append((time.perf_counter() - start) / repeat)
            counts.append(len(moves))
    return statistics.fmean(times), max(times), round(statistics.fmean(counts))


def figures(games: int = 60) -> dict[str, str]:
    """The figures the issue asks for, as readable strings."""
    base = games_per_second(games)
    falcon = games_per_second(games, falcon=True)
    greedy = games_per_second(max(games // 6, 5), (GREEDY, GREEDY), falcon=True)
    mean, worst, listed = placement_listing()
    return {
        "castle random-bot games/s (base, 60 tiles)": f"{base:.0f}",
        "castle random-bot games/s (Falcon, 78 tiles)": f"{falcon:.0f}",
        "castle greedy-bot games/s (Falcon)": f"{greedy:.1f}",
        "castle legal placements of one tile, mean": f"{mean * 1e6:.0f} us ({listed} placements on average)",
        "castle legal placements of one tile, worst": f"{worst * 1e6:.0f} us",
    }


if __name__ == "__main__":
    for name, value in figures().items():
        print(f"{name}: {value}")
