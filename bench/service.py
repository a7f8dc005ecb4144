"""The service section: throughput, latencies and fan-out of a served node, and its CPU.

The service runs in this process (an aiohttp site on a free localhost port, the embedded Valkey
in a temporary folder, ``appendfsync always`` as ``donjon serve`` defaults to); the load comes
from one child process (:mod:`bench.load`), so that the measured process does only the
service's work. On a two-core machine that is one core each (the Valkey server shares them).
The commands go to :data:`bench.die_game.BENCH`, to measure the service rather than a game's
rules, but for the real games' closed loop.

Figures:

* ``commands/s``: acks per second, 100 games each with one socket sending as fast as acked, and
  the CPU this process and the store spent per accepted command (sampled, :func:`cpu_at`);
* the same with 50 tables of each real game (2 seats choosing from ``legal``);
* ``ack p50/p99 @500/s``: command -> ack latency at an open-loop 500 commands/s over 100 games;
* ``spectator p50/p99``: command -> update at each spectator, 10 games x 100 spectators, and
  one game x 1,000 spectators, each paced at 5 commands/s. The time is the kernel's receive
  stamp on each spectator's socket (what a thousand separate machines would see), beside the
  same stamped when the one load process got round to reading it, and the server's own part
  (the node's reader folding, encoding and writing to every socket) measured exactly.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import gc
import itertools
import multiprocessing
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from bench import load
from bench.die_game import BENCH
from bench.percentiles import percentile
from bench.processes import free_port, process_cpu, raise_fd_limit

if TYPE_CHECKING:  # the embedded server and the service are imported where they start
    from aiohttp import web

    from events.embedded import EmbeddedServer, FsyncMode

__all__ = ["cpu_at", "service_figures"]

Drive = Callable[..., Awaitable[dict[str, Any]]]
"""``drive(kind, **params)``: one of :mod:`bench.load`'s loads run to its end in the load process."""
Samples = list[tuple[float, float, float]]
"""(wall, this process's CPU, the store's CPU) seconds, every 20 ms."""
REAL_GAMES = ("castle_panic", "carcassonne")
FANOUTS = ((10, 100, "10 games x 100 spectators"), (1, 1000, "1 game x 1,000 spectators"))
"""(games, spectators per game, label) of the fan-out figures."""


async def service_figures(quick: bool = False, fsync: FsyncMode = "always") -> dict[str, str]:
    """Run the service on an embedded server in a temp folder and drive it from a child process."""
    from service.edge.keys import METRICS
    from service.run.serving import settle_gc

    raise_fd_limit()
    seconds = 2.0 if quick else 6.0
    figures: dict[str, str] = {}
    with _collector_restored():
        async with _served(fsync) as served, _load_process(served.base) as drive:
            await drive("throughput", games=10, seconds=0.5)  # warm up the child and the server
            settle_gc()  # as `donjon serve` does once started
            async with _sampling_cpu(served.server.pid) as samples:
                figures.update(await _throughput_figures(drive, samples, seconds))
                figures.update(await _real_game_figures(drive, samples, seconds))
            figures.update(await _paced_figures(drive, seconds))
            figures.update(await _fanout_figures(drive, served.app[METRICS].publish_seconds, seconds))
    figures["service: store fsync"] = fsync
    return figures


@dataclasses.dataclass(frozen=True)
class _Served:
    app: web.Application
    base: str
    server: EmbeddedServer


@contextlib.asynccontextmanager
async def _served(fsync: FsyncMode) -> AsyncIterator[_Served]:
    """The service with the bench game and the real games, on a fresh embedded server."""
    from aiohttp import web

    import games as registry
    from events.embedded import EmbeddedServer
    from service.ops.settings import Secret, Settings
    from service.run.app import create_app

    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        server = EmbeddedServer(folder, fsync=fsync)
        await server.start_async()
        runner = None
        try:
            settings = Settings(
                redis_url=Secret(server.url), ws_rate=1e9, ws_burst=1e9, ws_outbox=100_000, log_level="warning"
            )
            app = create_app(settings, engines={"bench": BENCH, **registry.default_engines()})
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            port = free_port()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            yield _Served(app, f"http://127.0.0.1:{port}", server)
        finally:
            if runner is not None:
                await runner.cleanup()
            await asyncio.to_thread(server.stop)


@contextlib.asynccontextmanager
async def _load_process(base: str) -> AsyncIterator[Drive]:
    """A child process (spawned: nothing of this one's state) that runs the loads on ``base``."""
    loop = asyncio.get_running_loop()
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:

        async def drive(kind: str, **params: Any) -> dict[str, Any]:
            return await loop.run_in_executor(pool, load.drive, kind, base, params)

        yield drive


@contextlib.contextmanager
def _collector_restored() -> Iterator[None]:
    """The next sections measure without the served app's collector settings."""
    collector = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*collector)


async def _throughput_figures(drive: Drive, samples: Samples, seconds: float) -> dict[str, str]:
    result = await drive("throughput", games=100, seconds=seconds)
    python, store = _cpu_per_command(samples, result)
    return {
        "service: accepted commands/s (1 process, 100 games, closed loop)": f"{result['per_s']:,.0f}",
        "service: command->ack p50 / p99 at that load": _ms(result),
        "service: server CPU per accepted command (service + store)": _cpu_text(python, store),
    }


async def _real_game_figures(drive: Drive, samples: Samples, seconds: float) -> dict[str, str]:
    figures: dict[str, str] = {}
    for game in REAL_GAMES:
        result = await drive("real_games", game=game, games=50, seconds=seconds)
        python, store = _cpu_per_command(samples, result)
        figures[f"service: {game}, 50 games x 2 seats from legal: commands/s; CPU per command"] = (
            f"{result['per_s']:,.0f}; {_cpu_text(python, store)}; refused {result['refusals'] or 'none'}"
        )
    return figures


async def _paced_figures(drive: Drive, seconds: float) -> dict[str, str]:
    figures: dict[str, str] = {}
    for rate, label in ((1000, "1,000"), (500, "500")):
        result = await drive("paced", games=100, rate=rate, seconds=seconds)
        figures[f"service: command->ack p50 / p99 at {label} commands/s"] = _ms(result)
    return figures


async def _fanout_figures(drive: Drive, publish: Any, seconds: float) -> dict[str, str]:
    """Per fan-out load: the latency at the spectators' sockets, as read by the load process, and
    the server's own part (``publish``, the node's fan-out histogram, recorded exactly)."""
    figures: dict[str, str] = {}
    for games, spectators, label in FANOUTS:
        with _recording(publish) as server_side:
            result = await drive("fanout", games=games, spectators=spectators, rate_per_game=5, seconds=seconds)
        where = "at the spectators' sockets" if result["kernel_stamps"] else "read by the client"
        figures[f"service: command->spectator update p50 / p99 ({label}), {where}"] = _ms(result)
        figures[f"service:   the same, stamped when read by one client process ({label})"] = (
            f"{result['read_p50'] * 1e3:.1f} / {result['read_p99'] * 1e3:.1f} ms"
        )
        figures[f"service:   server side: fold + encode + write to every socket, p50 / p99 ({label})"] = (
            f"{percentile(server_side, 50) * 1e3:.1f} / {percentile(server_side, 99) * 1e3:.1f} ms "
            f"(n={len(server_side)})"
        )
    return figures


@contextlib.asynccontextmanager
async def _sampling_cpu(store_pid: int | None) -> AsyncIterator[Samples]:
    """Samples taken meanwhile by :func:`_sample_cpu`."""
    samples: Samples = []
    sampler = asyncio.create_task(_sample_cpu(samples, store_pid))
    try:
        yield samples
    finally:
        sampler.cancel()


async def _sample_cpu(samples: list[tuple[float, float, float]], store_pid: int | None) -> None:
    """(wall, this process's CPU, the store's CPU) every 20 ms, to charge the service only for
    a measured window."""
    while True:
        samples.append((time.perf_counter(), time.process_time(), process_cpu(store_pid)))
        await asyncio.sleep(0.02)


def cpu_at(samples: Sequence[tuple[float, ...]], at: float, column: int = 1) -> float:
    """A CPU column of the samples at wall time ``at``, interpolated between samples."""
    for s0, s1 in itertools.pairwise(samples):
        (t0, c0), (t1, c1) = (s0[0], s0[column]), (s1[0], s1[column])
        if t0 <= at <= t1:
            return c0 + (c1 - c0) * (at - t0) / (t1 - t0) if t1 > t0 else c0
    if not samples:
        return 0.0
    return samples[-1][column] if at > samples[-1][0] else samples[0][column]


def _cpu_per_command(samples: list[tuple[float, float, float]], result: dict[str, Any]) -> tuple[float, float]:
    """Seconds of CPU per accepted command over the driver's window: (the service, the store)."""
    started, ended = result["window"]
    n = max(1, result["n"])
    python, store = ((cpu_at(samples, ended, column) - cpu_at(samples, started, column)) / n for column in (1, 2))
    return python, store


def _cpu_text(python: float, store: float) -> str:
    return f"{(python + store) * 1e6:,.0f} us (service {python * 1e6:,.0f} + store {store * 1e6:,.0f})"


@contextlib.contextmanager
def _recording(histogram: Any) -> Iterator[list[float]]:
    """Every value ``histogram`` observes meanwhile, exactly: its buckets are too coarse for the
    p99 of a few dozen fan-outs."""
    values: list[float] = []
    observe = histogram.observe

    def record(value: float, **labels: str) -> None:
        values.append(value)
        observe(value, **labels)

    histogram.observe = record
    try:
        yield values
    finally:
        del histogram.observe


def _ms(result: dict[str, Any]) -> str:
    return f"{result['p50'] * 1e3:.1f} / {result['p99'] * 1e3:.1f} ms (n={result['n']:,})"

