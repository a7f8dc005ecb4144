"""``donjon bench``: the performance figures, printed as a table.

Sections (``--only`` picks some):

* ``service`` — :func:`bench.service.service_figures`: accepted commands/s, command->ack
  and command->spectator-update latencies, on an embedded server with ``appendfsync always``;
* ``workers`` — :func:`bench.workers.worker_figures`: accepted commands/s of ``donjon
  serve --workers 1`` and with one worker per core (at least 2), and their ratio;
* ``replay`` — :func:`bench.in_process.replay_figures`: fold speed of real games replayed by
  ``donjon replay``'s code;
* ``bots`` — :func:`bench.in_process.bot_figures`: bot-only games of every game's bots through
  the service's bot path: bot moves/s and the worst event-loop lag meanwhile;
* ``store`` — ``bench.store.append_vs_xadd``: the store's append rate beside a raw XADD rate
  measured in the same run, and their ratio;
* ``engines`` — :func:`bench.in_process.engine_figures`: for each registered game, random-legal
  games/s and the mean ``legal_moves`` time, using only the Engine surface;
* ``games`` — each game's own ``bench.<game>.figures()`` when that module exists;
* ``memory`` — :func:`bench.memory.memory_figures`: a fresh node's RSS after loading
  10,000 finished games (1,000 with ``--quick``), with the default cache bounds and unbounded.
* ``archive`` — :func:`bench.archive.archive_figures`: one node archiving 10,000 finished games
  (1,000 with ``--quick``) into the local PostgreSQL (``DONJON_BENCH_POSTGRES_URL``; skipped,
  saying why, without one) and 1,000 into SQLite, games/s; Valkey's memory empty, full and after
  archiving; p50/p99 of a read of an archived game's events.
* ``cluster`` — :func:`bench.cluster.cluster_figures`: commands/s, update latency and CPU
  per command with 1, 2 and 3 node processes on one Valkey and on a 3-master cluster, and a
  node's store connections with 10, 1,000 and 5,000 watched games. Not in the default run (it
  starts several processes and takes a few minutes): ask for it with ``--only cluster``.
* ``peers`` — :func:`bench.peers.peer_figures`: donjon beside boardgame.io 0.50.2 (installed
  with npm into a cache folder; skipped, saying why, without npm and Node), the same trivial
  game and load on both: server CPU per accepted move and its ratio at 50 x 0, 10 x 20, 1 x 200
  and 1 x 1,000 (games x spectators), the real games against the trivial one and taken apart
  (the trivial game under the real games' load, each game's set-up alone), two workers against
  one. Not in the default run either (about seven minutes): ``--only peers``.

Every run begins with the machine it ran on (:func:`machine_figures`): the processor, the cores,
the Python, and the time of a fixed pure-Python loop, so that figures taken on different machines
(or on one machine on a slow day) can be compared. ``--runs N`` repeats the chosen sections and
ends with each figure's N values side by side: the spread the README reports.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["run_bench", "SECTIONS", "machine_figures", "reference_loop_ns", "spread"]

SECTIONS = (
    "service", "workers", "replay", "bots", "store", "durability", "engines", "games", "memory", "archive", "cluster",
    "peers",
)
DEFAULT_SECTIONS = ("service", "workers", "replay", "bots", "store", "engines", "games", "memory", "archive")
"""What ``donjon bench`` runs without ``--only`` (``cluster`` and ``peers`` take minutes each)."""


async def _store_figures(quick: bool) -> dict[str, str]:
    from bench.store import append_vs_xadd
    from events.embedded import EmbeddedServer

    figures: dict[str, str] = {}
    n = 2000 if quick else 10000
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with EmbeddedServer(folder, fsync="always") as server:
            for concurrency in (1, 16):
                result = await append_vs_xadd(server.url, n, concurrency=concurrency)
                figures[f"store: append / XADD per s (fsync always, {concurrency} writer(s))"] = (
                    f"{result['append_per_s']:,.0f} / {result['xadd_per_s']:,.0f} = {result['ratio']:.2f}"
                )
    return figures


def _game_figures(engines: Mapping[str, Any], quick: bool) -> dict[str, str]:
    figures: dict[str, str] = {}
    for name in sorted(engines):
        try:
            module = importlib.import_module(f"bench.{name}")
        except ImportError:
            continue
        make = getattr(module, "figures", None)
        if make is None:
            continue
        parameters = inspect.signature(make).parameters
        kwargs: dict[str, Any] = {}
        if "quick" in parameters:
            kwargs["quick"] = quick
        elif quick and "games" in parameters:
            kwargs["games"] = 10
        for key, value in make(**kwargs).items():
            figures[key if key.startswith(name) else f"{name}: {key}"] = str(value)
    return figures


REFERENCE_LOOP = 1_000_000
"""Iterations of the machine's reference loop (an integer sum: the interpreter's own speed)."""


def reference_loop_ns(repeats: int = 5) -> float:
    """Nanoseconds per iteration of a plain ``for`` loop summing integers, the median of
    ``repeats`` timings: a yardstick of this machine's single-core Python speed."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        total = 0
        for i in range(REFERENCE_LOOP):
            total += i
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) / REFERENCE_LOOP * 1e9


def _processor() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_figures() -> dict[str, str]:
    """What the figures were measured on."""
    return {
        "machine: processor, cores, Python": (
            f"{_processor()}, {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}"
        ),
        "machine: reference loop (pure-Python integer sum), ns per iteration": f"{reference_loop_ns():.1f}",
        "machine: tile board (games/tileboard/board.py)": _tile_board(),
    }


def _tile_board() -> str:
    from games.tileboard import BOARD_COMPILED

    if BOARD_COMPILED:
        return "compiled by mypyc (setup.py)"
    return "plain Python (an editable install, DONJON_PURE_PYTHON, or no C compiler at install)"


def spread(runs: list[dict[str, str]]) -> dict[str, str]:
    """Each figure's values over ``runs``, in run order, side by side (a figure a run lacks shows ``-``).

    >>> spread([{"a": "1"}, {"a": "3", "b": "x"}])
    {'a': '1 | 3', 'b': '- | x'}
    """
    names = list(dict.fromkeys(name for run in runs for name in run))
    return {name: " | ".join(run.get(name, "-") for run in runs) for name in names}


def _table(figures: dict[str, str]) -> str:
    width = max((len(name) for name in figures), default=10)
    return "\n".join(f"{name.ljust(width)}  {value}" for name, value in figures.items())


async def run_bench(
    *,
    quick: bool = False,
    sections: list[str] | None = None,
    as_json: bool = False,
    engines: Mapping[str, Any] | None = None,
    runs: int = 1,
) -> int:
    """Run the chosen sections (all by default) ``runs`` times and print their figures; 0 when all ran."""
    import games
    from service.ops.logs import configure_logging
    from service.run.console import out

    wanted = sections or list(DEFAULT_SECTIONS)
    unknown = sorted(set(wanted) - set(SECTIONS))
    if unknown:
        out(f"unknown section(s) {unknown}; choose from {', '.join(SECTIONS)}")
        return 2
    if runs < 1:
        out(f"--runs must be 1 or more, not {runs}")
        return 2
    # The measured service logs as in production (JSON lines, info: a line per command), to nowhere.
    configure_logging("json", "info", stream=open(os.devnull, "w"))  # noqa: SIM115, ASYNC230 - once, before the run; lives as long as it
    sys.excepthook = sys.__excepthook__  # but the bench's own failure shows its traceback, not to nowhere
    engines = dict(engines) if engines is not None else games.default_engines()
    started = time.perf_counter()
    machine = machine_figures()
    if not as_json:
        out(_table(machine))
    results = []
    for run in range(1, runs + 1):
        if runs > 1 and not as_json:
            out(f"--- run {run} of {runs}")
        figures = await _run_sections(wanted, engines, quick, as_json)
        figures["load average (1, 5, 15 min) at the end"] = ", ".join(f"{load:.2f}" for load in os.getloadavg())
        if not as_json:
            out(f"load average (1, 5, 15 min) at the end: {figures['load average (1, 5, 15 min) at the end']}")
        results.append(figures)
    if as_json:
        document: dict[str, Any] = {**machine, **results[0]} if runs == 1 else {**machine, "runs": results}
        out(json.dumps(document, indent=2))
    else:
        if runs > 1:
            out(f"--- every figure over the {runs} runs, in run order")
            out(_table(spread(results)))
        out(f"total {time.perf_counter() - started:.1f} s")
    return 0


async def _run_sections(
    wanted: list[str], engines: Mapping[str, Any], quick: bool, as_json: bool
) -> dict[str, str]:
    """One run of the ``wanted`` sections, in :data:`SECTIONS` order, each printed as it ends."""
    from bench.in_process import bot_figures, engine_figures, replay_figures
    from bench.service import service_figures
    from service.run.console import out

    figures: dict[str, str] = {}
    for section in SECTIONS:
        if section not in wanted:
            continue
        section_started = time.perf_counter()
        if section == "service":
            part = await service_figures(quick)
        elif section == "workers":
            from bench.workers import worker_figures

            part = await worker_figures(quick)
        elif section == "replay":
            part = await replay_figures(engines, quick)
        elif section == "bots":
            part = await bot_figures(engines, quick)
        elif section == "store":
            part = await _store_figures(quick)
        elif section == "durability":
            from bench.durability import durability_figures

            part = await durability_figures(quick)
        elif section == "engines":
            part = await asyncio.to_thread(engine_figures, engines, quick)
        elif section == "memory":
            from bench.memory import memory_figures

            part = await memory_figures(engines, quick)
        elif section == "archive":
            from bench.archive import archive_figures

            part = await archive_figures(quick)
        elif section == "cluster":
            from bench.cluster import cluster_figures

            part = await cluster_figures(quick)
        elif section == "peers":
            from bench.peers import peer_figures

            part = await peer_figures(quick)
        else:
            part = await asyncio.to_thread(_game_figures, engines, quick)
        figures.update(part)
        if not as_json:
            out(_table(part))
            out(f"  ({section}: {time.perf_counter() - section_started:.1f} s)")
    return figures
