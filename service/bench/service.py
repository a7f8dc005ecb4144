"""Service benchmarks on the embedded server: throughput, latencies, fan-out, replay speed.

The service runs in this process (an aiohttp site on a free localhost port, the embedded Valkey
in a temporary folder, ``appendfsync always`` as ``donjon serve`` defaults to); the load comes
from one child process, so that the measured process does only the service's work. On a
two-core machine that is one core each (the Valkey server shares them).

To measure the service rather than a game's rules, the commands go to :data:`BENCH`, a one-seat
engine whose only command draws a die roll from the service's rng (a random outcome written
into the event, like the real games) and that never ends. Replay speed is measured on real
games (random legal play through the command path, then :func:`service.replay.replay_game`).

Figures:

* ``commands/s``: acks per second, 100 games each with one socket sending as fast as acked;
* ``ack p50/p99 @500/s``: command -> ack latency at an open-loop 500 commands/s over 100 games;
* ``spectator p50/p99``: command -> update at each spectator, 10 games x 100 spectators, and
  one game x 1,000 spectators;
* ``replay``: events folded per second (``donjon replay``'s fold, decode excluded) per game.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import multiprocessing
import random
import resource
import socket
import tempfile
import time
from typing import Any, Mapping

from games.base import Event, OptionSpec, command

__all__ = ["BENCH", "BenchEngine", "service_figures", "replay_figures", "engine_figures", "percentile"]


# --- the bench engine ------------------------------------------------------------------------------


class BenchEngine:
    """One seat, one command (``roll``), never over: the service's cost with a trivial game."""

    name = "bench"
    title = "Service benchmark (a die rolled forever)"
    min_seats = 1
    max_seats = 1
    options: Mapping[str, OptionSpec] = {}

    def catalog_entry(self) -> dict[str, Any]:
        return {"id": self.name, "title": self.title, "min_seats": 1, "max_seats": 1, "options": {}}

    def normalize_options(self, options: Mapping[str, Any], seats: int) -> dict[str, Any]:
        return {}

    def initial_state(self) -> tuple[int, int]:
        return (0, 0)

    def setup(self, options: Mapping[str, Any], seats: int, rng: random.Random) -> list[Event]:
        return [Event("opened", {})]

    def evolve(self, state: tuple[int, int], event: Event) -> tuple[int, int]:
        if event.type == "rolled":
            return (state[0] + 1, state[1] + event.payload["value"])
        return state

    def decide(self, state: tuple[int, int], seat: int, cmd: dict[str, Any], rng: random.Random) -> list[Event]:
        return [Event("rolled", {"value": rng.randint(1, 6)})]

    def legal_moves(self, state: tuple[int, int], seat: int | None) -> list[dict[str, Any]]:
        return [command("roll")] if seat == 0 else []

    def view(self, state: tuple[int, int], viewer: int | None) -> dict[str, Any]:
        return {"rolls": state[0], "total": state[1], "legal": self.legal_moves(state, viewer)}

    def redact(self, event: Event, viewer: int | None) -> Event:
        return event

    def is_terminal(self, state: tuple[int, int]) -> bool:
        return False

    def summary(self, state: tuple[int, int]) -> dict[str, Any]:
        return {"status": "active", "rolls": state[0]}


BENCH = BenchEngine()
ROLL = {"type": "command", "command": {"type": "roll", "args": {}}}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q / 100 * (len(ordered) - 1)))))
    return ordered[index]


# --- load generators (run in the child process) --------------------------------------------------


async def _new_game(session: Any, base: str) -> tuple[str, str]:
    async with session.post(f"{base}/games", json={"game": "bench", "seats": 1}) as response:
        game_id = (await response.json())["id"]
    async with session.post(f"{base}/games/{game_id}/seats", json={"name": "bench"}) as response:
        token = (await response.json())["token"]
    return game_id, token


async def _socket(session: Any, base: str, game_id: str, token: str | None = None) -> Any:
    ws = await session.ws_connect(f"{base}/games/{game_id}/ws", max_msg_size=0)
    hello: dict[str, Any] = {"type": "hello"}
    if token:
        hello["token"] = token
    await ws.send_json(hello)
    await ws.receive_json()
    return ws


async def _throughput(base: str, games: int, seconds: float) -> dict[str, Any]:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        pairs = [await _new_game(session, base) for _ in range(games)]
        sockets = [await _socket(session, base, game_id, token) for game_id, token in pairs]
        acks = 0
        latencies: list[float] = []
        stop = time.perf_counter() + seconds

        async def drive(ws: Any, n: int) -> None:
            nonlocal acks
            k = 0
            while time.perf_counter() < stop:
                k += 1
                sent = time.perf_counter()
                await ws.send_json(dict(ROLL, id=f"{n}-{k}"))
                while True:
                    frame = await ws.receive_json()
                    if frame["type"] == "ack":
                        break
                    if frame["type"] == "error":
                        raise RuntimeError(frame)
                latencies.append(time.perf_counter() - sent)
                acks += 1

        started = time.perf_counter()
        await asyncio.gather(*(drive(ws, n) for n, ws in enumerate(sockets)))
        ended = time.perf_counter()
        for ws in sockets:
            await ws.close()
    return {
        "per_s": acks / (ended - started),
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "n": acks,
        "window": (started, ended),  # perf_counter is the system-wide monotonic clock on Linux
    }


async def _paced(base: str, games: int, rate: float, seconds: float) -> dict[str, Any]:
    """Open loop: ``rate`` commands/s in total, spread evenly over ``games`` sockets."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        pairs = [await _new_game(session, base) for _ in range(games)]
        sockets = [await _socket(session, base, game_id, token) for game_id, token in pairs]
        latencies: list[float] = []
        sent_at: dict[str, float] = {}
        interval = games / rate
        start = time.perf_counter() + 0.2
        count = int(seconds * rate / games)

        async def send(ws: Any, n: int) -> None:
            for k in range(count):
                delay = start + n * interval / games + k * interval - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                sent_at[f"{n}-{k}"] = time.perf_counter()
                await ws.send_json(dict(ROLL, id=f"{n}-{k}"))

        async def read(ws: Any) -> None:
            got = 0
            while got < count:
                frame = await ws.receive_json()
                if frame["type"] == "ack":
                    latencies.append(time.perf_counter() - sent_at[frame["id"]])
                    got += 1
                elif frame["type"] == "error":
                    raise RuntimeError(frame)

        await asyncio.gather(*(send(ws, n) for n, ws in enumerate(sockets)), *(read(ws) for ws in sockets))
        for ws in sockets:
            await ws.close()
    return {"p50": percentile(latencies, 50), "p99": percentile(latencies, 99), "n": len(latencies)}


async def _fanout(base: str, games: int, spectators: int, rate_per_game: float, seconds: float) -> dict[str, Any]:
    """Each game: one player paced at ``rate_per_game``, ``spectators`` sockets watching."""
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        pairs = [await _new_game(session, base) for _ in range(games)]
        players = [await _socket(session, base, game_id, token) for game_id, token in pairs]
        start_version = [3] * games  # created, seat taken, opened
        watchers = []
        for game_index, (game_id, _) in enumerate(pairs):
            opened = await asyncio.gather(*(_socket(session, base, game_id) for _ in range(spectators)))
            watchers.extend((game_index, ws) for ws in opened)
        count = int(seconds * rate_per_game)
        sent_at: dict[tuple[int, int], float] = {}
        pending: dict[tuple[int, str], float] = {}
        latencies: list[float] = []
        start = time.perf_counter() + 0.3

        async def play(game_index: int, ws: Any) -> None:
            for k in range(count):
                delay = start + k / rate_per_game + game_index / (rate_per_game * games) - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                pending[(game_index, f"c{k}")] = time.perf_counter()
                await ws.send_json(dict(ROLL, id=f"c{k}"))
            acked = 0
            while acked < count:
                frame = await ws.receive_json()
                if frame["type"] == "ack":
                    sent_at[(game_index, frame["version"])] = pending.pop((game_index, frame["id"]))
                    acked += 1

        async def watch(game_index: int, ws: Any) -> None:
            # Stamp on arrival and parse later: the client's own JSON work must not count as latency.
            raw = []
            last = start_version[game_index] + count
            while True:
                message = await ws.receive()
                raw.append((message.data, time.perf_counter()))
                if f'"version":{last},' in message.data:
                    break
            arrivals = []
            for data, at in raw:
                frame = json.loads(data)
                if frame["type"] == "update":
                    arrivals.append((frame["version"], at))
            watch_arrivals.append((game_index, arrivals))

        watch_arrivals: list[tuple[int, list[tuple[int, float]]]] = []
        await asyncio.gather(
            *(play(i, ws) for i, ws in enumerate(players)), *(watch(i, ws) for i, ws in watchers)
        )
        for game_index, arrivals in watch_arrivals:
            for version, at in arrivals:
                sent = sent_at.get((game_index, version))
                if sent is not None:
                    latencies.append(at - sent)
        for ws in players + [ws for _, ws in watchers]:
            await ws.close()
    return {"p50": percentile(latencies, 50), "p99": percentile(latencies, 99), "n": len(latencies)}


_DRIVERS = {"throughput": _throughput, "paced": _paced, "fanout": _fanout}


def _drive(kind: str, base: str, params: dict[str, Any]) -> dict[str, Any]:
    _raise_fd_limit()
    return asyncio.run(_DRIVERS[kind](base, **params))


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- the measured service ----------------------------------------------------------------------------


async def service_figures(quick: bool = False, fsync: str = "always") -> dict[str, str]:
    """Run the service on an embedded server in a temp folder and drive it from a child process."""
    from aiohttp import web

    from events.embedded import EmbeddedServer
    from service.app import create_app
    from service.keys import METRICS
    from service.settings import Secret, Settings

    _raise_fd_limit()
    seconds = 2.0 if quick else 6.0
    figures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        server = EmbeddedServer(folder, fsync=fsync)  # type: ignore[arg-type]
        await server.start_async()
        runner = None
        try:
            settings = Settings(
                redis_url=Secret(server.url), ws_rate=1e9, ws_burst=1e9, ws_outbox=100_000, log_level="warning"
            )
            app = create_app(settings, engines={"bench": BENCH})
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            port = _free_port()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            base = f"http://127.0.0.1:{port}"
            loop = asyncio.get_running_loop()
            context = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:

                async def drive(kind: str, **params: Any) -> dict[str, Any]:
                    return await loop.run_in_executor(pool, _drive, kind, base, params)

                await drive("throughput", games=10, seconds=0.5)  # warm up the child and the server
                samples: list[tuple[float, float]] = []
                sampler = asyncio.create_task(_sample_cpu(samples))
                result = await drive("throughput", games=100, seconds=seconds)
                sampler.cancel()
                started, ended = result["window"]
                cpu_per_command = (_cpu_at(samples, ended) - _cpu_at(samples, started)) / max(1, result["n"])
                figures["service: accepted commands/s (1 process, 100 games, closed loop)"] = f"{result['per_s']:,.0f}"
                figures["service: command->ack p50 / p99 at that load"] = _ms(result)
                figures["service: service CPU per accepted command"] = (
                    f"{cpu_per_command * 1e6:,.0f} us (= {1 / cpu_per_command:,.0f} commands/s per core)"
                )
                result = await drive("paced", games=100, rate=500, seconds=seconds)
                figures["service: command->ack p50 / p99 at 500 commands/s"] = _ms(result)
                publish = app[METRICS].publish_seconds
                for games, spectators, label in ((10, 100, "10 games x 100 spectators"), (1, 1000, "1 game x 1,000 spectators")):
                    before = publish.snapshot()
                    result = await drive("fanout", games=games, spectators=spectators, rate_per_game=5, seconds=seconds)
                    figures[f"service: command->spectator update p50 / p99 ({label}), seen by clients"] = _ms(result)
                    figures[f"service:   of which server side: fold + encode + write to every socket, p99 ({label})"] = (
                        f"{publish.quantile(0.99, since=before) * 1e3:.1f} ms"
                    )
        finally:
            if runner is not None:
                await runner.cleanup()
            await asyncio.to_thread(server.stop)
    figures["service: store fsync"] = fsync
    return figures


async def _sample_cpu(samples: list[tuple[float, float]]) -> None:
    """(wall, this process's CPU) every 20 ms, to charge the service only for a measured window."""
    while True:
        samples.append((time.perf_counter(), time.process_time()))
        await asyncio.sleep(0.02)


def _cpu_at(samples: list[tuple[float, float]], at: float) -> float:
    """This process's CPU time at wall time ``at``, interpolated between samples."""
    for (t0, c0), (t1, c1) in zip(samples, samples[1:]):
        if t0 <= at <= t1:
            return c0 + (c1 - c0) * (at - t0) / (t1 - t0) if t1 > t0 else c0
    return samples[-1][1] if samples and at > samples[-1][0] else (samples[0][1] if samples else 0.0)


def _ms(result: dict[str, Any]) -> str:
    return f"{result['p50'] * 1e3:.1f} / {result['p99'] * 1e3:.1f} ms (n={result['n']:,})"


async def replay_figures(engines: Mapping[str, Any], quick: bool = False) -> dict[str, str]:
    """Play random legal games of each real engine through the command path, then replay them."""
    from events.embedded import EmbeddedServer
    from events.store import EventStore
    from service.commands import GameService
    from service.replay import replay_game

    figures: dict[str, str] = {}
    games_each = 2 if quick else 5
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
    from service.commands import GameService

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
    while any((p := service.cached(g)) is None or p.status.value != "finished" for g in ids):
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


def engine_figures(engines: Mapping[str, Any], quick: bool = False) -> dict[str, str]:
    """For every engine, using only the Engine surface: random-legal games/s and mean legal_moves time."""
    from games.base import derive_rng, fold

    figures: dict[str, str] = {}
    budget = 1.0 if quick else 4.0
    for name in sorted(engines):
        engine = engines[name]
        seats = min(max(2, engine.min_seats), engine.max_seats)
        options = engine.normalize_options({}, seats)
        played = commands = legal_calls = 0
        legal_seconds = 0.0
        started = time.perf_counter()
        while time.perf_counter() - started < budget or played == 0:
            rng = random.Random(played)
            state = fold(engine, engine.setup(options, seats, rng))
            while not engine.is_terminal(state):
                movers = []
                for seat in range(seats):
                    before = time.perf_counter()
                    legal = engine.legal_moves(state, seat)
                    legal_seconds += time.perf_counter() - before
                    legal_calls += 1
                    if legal:
                        movers.append((seat, legal))
                seat, legal = rng.choice(movers)
                state = fold(engine, engine.decide(state, seat, rng.choice(legal), derive_rng(b"b", "g", commands)), state)
                commands += 1
            played += 1
        elapsed = time.perf_counter() - started
        figures[f"engine: {name} random-legal games/s ({seats} seats)"] = (
            f"{played / elapsed:,.1f} ({commands / played:.0f} commands/game)"
        )
        figures[f"engine: {name} legal_moves mean"] = f"{legal_seconds / legal_calls * 1e6:,.0f} us"
    return figures
