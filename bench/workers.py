"""The ``workers`` bench section: ``donjon serve --workers N`` against ``--workers 1``.

Each run is a real ``donjon serve`` process (serving the bench game) on an embedded store with
``fsync always`` in a temp folder, driven by the service section's closed-loop client in a
child process: accepted commands/s over 100 games, and the CPU of the whole process tree (the
supervisor, the workers, the store) per accepted command. The load client (raw sockets, see
:class:`bench.raw_sockets.Player`) runs on the same cores, so its own CPU per command is
given too: on two cores, what it spends is taken from the workers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
import tempfile

from bench.load import drive
from bench.processes import donjon_serve, free_port, serve_env, spawned, tree_cpu
from service.run.workers import default_workers

__all__ = ["worker_figures"]


async def _run(workers: int, seconds: float, pool: concurrent.futures.Executor) -> tuple[float, float, float]:
    """(commands/s, CPU seconds of the process tree per command, CPU seconds of the load process
    per command) with ``workers`` workers."""
    loop = asyncio.get_running_loop()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with spawned(donjon_serve("{'bench': BENCH}", port, folder, workers), base, env=serve_env()) as proc:
            await asyncio.sleep(1.0)  # every worker listening
            await loop.run_in_executor(pool, drive, "throughput", base, {"games": 10, "seconds": 0.5})
            before = tree_cpu(proc.pid)
            result = await loop.run_in_executor(pool, drive, "throughput", base, {"games": 100, "seconds": seconds})
            spent = tree_cpu(proc.pid) - before
    commands = max(1, result["n"])
    return result["per_s"], spent / commands, result["client_cpu"] / commands


async def worker_figures(quick: bool = False) -> dict[str, str]:
    seconds = 2.0 if quick else 6.0
    many = max(2, default_workers())
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        one, one_cpu, one_client = await _run(1, seconds, pool)
        more, more_cpu, more_client = await _run(many, seconds, pool)
    return {
        "workers: accepted commands/s, 100 games, 1 worker": f"{one:,.0f} ({one_cpu * 1e6:,.0f} us CPU per command)",
        f"workers: accepted commands/s, 100 games, {many} workers": (
            f"{more:,.0f} ({more_cpu * 1e6:,.0f} us CPU per command); ratio {more / one:.2f}"
        ),
        "workers: the load client's own CPU per command, 1 worker / "
        f"{many} workers": f"{one_client * 1e6:,.0f} / {more_client * 1e6:,.0f} us (on the same cores)",
        "workers: load average (1 min) after the runs": f"{os.getloadavg()[0]:.2f}",
    }
