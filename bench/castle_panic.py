"""Castle Panic engine benchmark: complete random-bot games per second and legal-move timing.

Run ``python -m bench.castle_panic``. Everything runs in the pure engine on one core:
setup, ``legal_moves`` for the bot, ``decide`` and ``evolve`` for every command, nothing else.
Target (issue): at least 200 complete 4-player random-bot games per second per core.
"""

from __future__ import annotations

import time
from typing import Any

from games.base import Bot, play_out, play_steps
from games.castle_panic import ENGINE
from games.castle_panic.bots import HEURISTIC, RANDOM
from games.castle_panic.rules import legal_moves
from games.castle_panic.state import Phase, State

__all__ = ["figures", "play_one"]


def play_one(seed: int, seats: int = 4, bot: Bot = RANDOM, **options: Any) -> tuple[State, int]:
    """One complete game with ``bot`` in every seat; returns the final state and the commands."""
    state, commands = play_out(ENGINE, seats, options, bot, seed)
    return state, len(commands)


def games_per_second(
    games: int, seats: int = 4, bot: Bot = RANDOM, rounds: int = 3, **options: Any
) -> tuple[float, float, float]:
    """Games per second (the best of ``rounds`` timed runs of the same ``games`` seeds, so that
    other processes on a shared machine distort it less), mean commands per game, share won."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        commands = wins = 0
        for seed in range(games):
            state, n = play_one(seed, seats, bot, **options)
            commands += n
            wins += state.result is not None and state.result.outcome == "win"
        best = min(best, time.perf_counter() - start)
    return games / best, commands / games, wins / games


def sample_states(games: int, seats: int = 4) -> list[tuple[State, int]]:
    """Every (state, waiting seat) met in ``games`` random 4-player games."""
    return [(state, seat) for seed in range(games)
            for state, seat, _ in play_steps(ENGINE, seats, {}, RANDOM, 50_000 + seed)]


def legal_timing(samples: list[tuple[State, int]], only: Phase | None = None) -> tuple[float, float]:
    """Mean seconds per ``legal_moves`` call and mean list length over the sampled states."""
    chosen = [(s, seat) for s, seat in samples if only is None or (s.turn.phase is only and s.turn.trade is None)]
    rounds = 5
    start = time.perf_counter()
    total = 0
    for _ in range(rounds):
        for state, seat in chosen:
            total += len(legal_moves(state, seat))
    elapsed = time.perf_counter() - start
    calls = rounds * len(chosen)
    return elapsed / calls, total / calls


def figures(quick: bool = False) -> dict[str, str]:
    n = 60 if quick else 200
    random_rate, random_commands, _ = games_per_second(n)
    solo_rate, _, _ = games_per_second(n, seats=1)
    six_rate, _, _ = games_per_second(n, seats=6)
    overlord_rate, _, _ = games_per_second(n, seats=4, overlord=True)
    heuristic_rate, heuristic_commands, heuristic_wins = games_per_second(n // 4, bot=HEURISTIC, rounds=1)
    samples = sample_states(40 if quick else 100)
    legal_all, legal_len = legal_timing(samples)
    legal_play, play_len = legal_timing(samples, Phase.PLAY)
    legal_trade, trade_len = legal_timing(samples, Phase.TRADE)
    return {
        "castle_panic.random_4p_games_per_s": f"{random_rate:.0f}",
        "castle_panic.random_4p_commands_per_game": f"{random_commands:.1f}",
        "castle_panic.random_1p_games_per_s": f"{solo_rate:.0f}",
        "castle_panic.random_6p_games_per_s": f"{six_rate:.0f}",
        "castle_panic.random_4p_overlord_games_per_s": f"{overlord_rate:.0f}",
        "castle_panic.heuristic_4p_games_per_s": f"{heuristic_rate:.0f}",
        "castle_panic.heuristic_4p_commands_per_game": f"{heuristic_commands:.1f}",
        "castle_panic.heuristic_4p_win_rate": f"{heuristic_wins:.2f}",
        "castle_panic.legal_moves_mean_us": f"{legal_all * 1e6:.1f}",
        "castle_panic.legal_moves_mean_count": f"{legal_len:.1f}",
        "castle_panic.legal_moves_play_phase_us": f"{legal_play * 1e6:.1f}",
        "castle_panic.legal_moves_play_phase_count": f"{play_len:.1f}",
        "castle_panic.legal_moves_trade_phase_us": f"{legal_trade * 1e6:.1f}",
        "castle_panic.legal_moves_trade_phase_count": f"{trade_len:.1f}",
    }


if __name__ == "__main__":
    for name, value in figures().items():
        print(f"{name}: {value}")
