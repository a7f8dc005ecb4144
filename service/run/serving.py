"""How a process runs donjon's code, as ``donjon serve`` does: on uvloop, its collector settled.

:func:`run` runs a coroutine to its end on a uvloop event loop (the CLI's commands, the bench's
load generators); :func:`serve_app` serves an aiohttp app until stopped, with :func:`settle_gc`
once every resource has started (``donjon serve``, and the bench's own nodes, so that what the
bench measures is what production runs). The CLI (:mod:`service.run.cli`) and the benchmark
(``bench/``) both use them; neither imports the other for it.
"""

from __future__ import annotations

import asyncio
import gc
import signal
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import uvloop

__all__ = ["run", "serve_app", "settle_gc", "YOUNG_GC_EVERY", "FULL_GC_EVERY"]

YOUNG_GC_EVERY = 10_000
"""Tracked allocations (net) between two young collections; CPython's default is 700."""
FULL_GC_EVERY = 10
"""Generation-1 collections between two full ones (CPython's default): with the young threshold
above, a full collection comes after ~1,000,000 allocations at most as often, against 70,000."""


T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end on a uvloop event loop (libuv: cheaper I/O and callbacks)."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


STOP_BOUND = 5.0
"""Seconds aiohttp's shutdown waits for requests and commands in flight once the sockets are
closed (the drain comes first, :mod:`service.run.drain`)."""


def serve_app(
    app: Any,
    *,
    host: str,
    port: int,
    announce: Callable[[], None] | None = None,
    reuse_port: bool | None = None,
    handed: Path | None = None,
) -> int:
    """Serve the aiohttp ``app`` as ``donjon serve`` does, until stopped; the exit status.

    ``handed``: take the connections a router hands over at that unix socket
    (:mod:`service.run.routing`) instead of listening on ``host:port``.

    On uvloop, no access log, the collector settled once every resource has started (the bench's
    cluster nodes too). SIGTERM and SIGINT, or a part of the node that cannot go on, ask the app's
    :class:`~service.ops.lifecycle.Lifecycle` to stop: the node drains, then stops."""
    app.on_startup.append(_settle_gc_on_startup)  # after the cleanup contexts: every resource has started
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(_serve(app, host, port, announce, reuse_port, handed))


async def _serve(
    app: Any, host: str, port: int, announce: Callable[[], None] | None, reuse_port: bool | None, handed: Path | None
) -> int:
    from aiohttp import web

    from service.edge.keys import LIFECYCLE, WORKER
    from service.run.drain import drain
    from service.run.routing import HandedSockets

    life = app[LIFECYCLE]
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, life.stop, 0, signal.Signals(sig).name)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=STOP_BOUND)
    await runner.setup()
    assert runner.server is not None  # made by setup()
    taken = None if handed is None else HandedSockets(handed, runner.server)
    try:
        if taken is None:
            await web.TCPSite(runner, host, port, reuse_port=reuse_port).start()
        else:
            taken.start()
        if WORKER in app:  # where the other workers ask for this one's series
            await web.UnixSite(runner, str(app[WORKER].own_socket)).start()
        if announce is not None:
            announce()
        await life.stopped()
        await drain(app)
    finally:
        if taken is not None:
            taken.stop()
        await runner.cleanup()
    return int(life.status)


async def _settle_gc_on_startup(_app: Any) -> None:
    """:func:`settle_gc`, as an ``on_startup`` hook of the served app."""
    settle_gc()


def settle_gc() -> None:
    """Take what start-up built out of the collector's sight and make full collections rarer.

    A full collection walks every tracked object, and with ~1,000 sockets it froze the process
    for 45-80 ms, mostly in connection bursts (new sockets outlive the young collections, and
    once they have grown the old generation by a quarter, every tenth young collection turns
    into a full one). Most of what a full collection walked never dies: modules,
    engines, datasets, the store client, built at start-up. ``gc.freeze`` moves those (collected
    first, so no start-up garbage is kept forever) to the permanent generation, which
    collections skip; on the idle served app that took a full collection from ~17 ms to ~0.
    Raising the young threshold from 700 to :data:`YOUNG_GC_EVERY` allocations makes young
    collections 14 times rarer: the command path allocates a few dozen container objects per
    command, almost all freed at once by reference counting, so at 700 a young collection ran
    every ~15 commands and the collector took ~17 µs of CPU per command on the bench (about 4 µs
    at 10,000, with no longer pauses). Full collections (over sockets and games), which count
    generation-1 collections, come as rarely: after ~1,000,000 allocations rather than ~350,000
    (the earlier setting, 700 x 10 x 50) or CPython's 70,000. The cost is that cyclic garbage
    waits that much longer to be freed; reference counting frees everything acyclic at once
    regardless. An operator's higher thresholds are kept.
    """
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_GC_EVERY), middle, max(old, FULL_GC_EVERY))
    from service.ops.logs import get_logger

    get_logger().info("serve.gc_settled", frozen=gc.get_freeze_count(), threshold=list(gc.get_threshold()))
