"""The figures measured in this process, without a served node: replay, bots, engines.

* ``replay``: events folded per second (``donjon replay``'s fold, decode excluded) per game, on
  real games played at random through the command path and then replayed by
  :func:`service.fairness.replay.replay_game`;
* ``bots``: bot-only games through the service's bot path, bot moves/s and the worst event-loop
  lag meanwhile;
* ``engines``: random-legal games/s and the mean ``legal_moves`` time of each engine, by the
  Engine surface alone.
"""

from __future__ import annotations

import asyncio
import gc
import random
import tempfile
import time
from collections.abc import Mapping
from typing import Any

from games.base import Rng

__all__ = ["bot_figures", "engine_figures", "replay_figures"]


async def replay_figures(engines: Mapping[str, Any], quick: bool = False) -> dict[str, str]:
    """Play random legal games of each real engine through the command path, then replay them."""
    from events.embedded import EmbeddedServer
    from events.store import EventStore
    from service.fairness.replay import replay_game
    from service.play.game_service import GameService

    figures: dict[str, str] = {}
    games_each = 2 if quick else 10  # random games differ in cost (The Castle's folds by ~10 %)
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with EmbeddedServer(folder, fsync="everysec") as server:
            store = await EventStore.connect(server.url)
            try:
                service = GameService(store, engines)
                for name in sorted(engines):
                    engine = engines[name]
                    seats = min(max(2, engine.min_seats), engine.max_seats)
                    events = seconds = 0.0
                    checked = True
                    for index in range(games_each):
                        game_id = await _play_random(service, name, seats, random.Random(index))
                        # `donjon replay` runs in a fresh process: collect the garbage that playing
                        # left here, or one full collection lands inside the timed fold.
                        gc.collect()
                        report = await replay_game(store, game_id, engines)
                        checked = checked and report.ok
                        events += report.version
                        seconds += report.fold_seconds
                    figures[f"replay: {name} fold events/s"] = (
                        f"{events / seconds:,.0f} ({events / games_each:.0f} events/game, "
                        f"re-run {'OK' if checked else 'MISMATCH'})"
                    )
            finally:
                await store.close()
    return figures


async def bot_figures(engines: Mapping[str, Any], quick: bool = False) -> dict[str, str]:
    """Bot-only games driven by the service's bot path (decide, append with fsync always, one
    task per game): bot moves/s with each game's bots, and the worst event-loop lag meanwhile."""
    from events.embedded import EmbeddedServer
    from events.store import EventStore
    from service.play.game_service import GameService

    figures: dict[str, str] = {}
    concurrent = 3 if quick else 10
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with EmbeddedServer(folder, fsync="always") as server:
            store = await EventStore.connect(server.url)
            service = GameService(store, engines)
            try:
                for name in sorted(engines):
                    engine = engines[name]
                    seats = min(max(2, engine.min_seats), engine.max_seats)
                    for bot in service.bot_names(name):
                        games = 1 if bot != "random" else concurrent
                        moves, seconds, lag = await _bot_games(service, name, bot, seats, games)
                        figures[f"bots: {name} {bot} x{games} game(s) at once, bot moves/s"] = (
                            f"{moves / seconds:,.0f} ({moves / games:.0f} moves/game; loop lag max {lag * 1e3:.1f} ms)"
                        )
            finally:
                await service.close()
                await store.close()
    return figures


async def _bot_games(service: Any, name: str, bot: str, seats: int, games: int) -> tuple[float, float, float]:
    """Run ``games`` bot-only games at once; (bot moves, seconds, worst loop lag in seconds)."""
    lags: list[float] = [0.0]

    async def probe() -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            lags.append(time.perf_counter() - before - 0.005)

    moves_before = service.metrics.bot_moves.value(game=name, bot=bot)
    probing = asyncio.create_task(probe())
    started = time.perf_counter()
    ids = []
    for _ in range(games):
        projection = await service.create_game(name, {}, seats, {str(s): bot for s in range(seats)}, True)
        ids.append(projection.game_id)
    # The bots' games end on their own; polling the cache costs the bench nothing it measures.
    while any((p := service.cached(g)) is None or p.status.value != "finished" for g in ids):  # noqa: ASYNC110
        await asyncio.sleep(0.005)
    seconds = time.perf_counter() - started
    probing.cancel()
    return service.metrics.bot_moves.value(game=name, bot=bot) - moves_before, seconds, max(lags)


async def _play_random(service: Any, name: str, seats: int, rng: random.Random) -> str:
    projection = await service.create_game(name, {}, seats)
    game_id = projection.game_id
    for seat in range(seats):
        await service.take_seat(game_id, f"bot{seat}")
    projection = await service.load(game_id)
    engine = projection.engine
    step = 0
    while projection.status.value == "active":
        movers = [(seat, engine.legal_moves(projection.state, seat)) for seat in range(seats)]
        movers = [(seat, legal) for seat, legal in movers if legal]
        seat, legal = rng.choice(movers)
        step += 1
        await service.execute(game_id, seat, f"b{step}", rng.choice(legal))
        projection = await service.load(game_id)
    return game_id


class _TimedLegal:
    """An engine whose ``legal_moves`` calls are counted and timed; the rest passes through."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.calls = 0
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def legal_moves(self, state: Any, seat: int) -> list[dict[str, Any]]:
        before = time.perf_counter()
        legal = self.engine.legal_moves(state, seat)
        self.seconds += time.perf_counter() - before
        self.calls += 1
        return legal


class _RandomLegal:
    """A bot of any engine, by the Engine surface alone: a uniformly random legal command."""

    name = "random-legal"

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def choose(self, state: Any, seat: int, rng: Rng) -> dict[str, Any]:
        return rng.choice(self.engine.legal_moves(state, seat))


def engine_figures(engines: Mapping[str, Any], quick: bool = False) -> dict[str, str]:
    """For every engine, using only the Engine surface: random-legal games/s and mean legal_moves
    time. Games are :func:`games.base.play_out` with a random-legal bot in every seat and one
    ``donjon-draw-1`` stream per game (``play_out``'s int seed) for every draw (a per-command
    stream costs as much as a light engine's command); ``legal_moves`` is timed both where it finds the seat that owes a
    command and where the bot lists its choices."""
    from games.base import play_out

    figures: dict[str, str] = {}
    budget = 1.0 if quick else 4.0
    for name in sorted(engines):
        timed = _TimedLegal(engines[name])
        seats = min(max(2, timed.min_seats), timed.max_seats)
        bot = _RandomLegal(timed)
        played = commands = 0
        started = time.perf_counter()
        while time.perf_counter() - started < budget or played == 0:
            _, moves = play_out(timed, seats, {}, bot, played)
            commands += len(moves)
            played += 1
        elapsed = time.perf_counter() - started
        figures[f"engine: {name} random-legal games/s ({seats} seats)"] = (
            f"{played / elapsed:,.1f} ({commands / played:.0f} commands/game)"
        )
        figures[f"engine: {name} legal_moves mean"] = f"{timed.seconds / max(timed.calls, 1) * 1e6:,.0f} us"
    return figures
