"""The ``workers`` bench section: ``donjon serve --workers N`` against ``--workers 1``.

Each run is a real ``donjon serve`` process (serving the bench game) on an embedded store with
``fsync always`` in a temp folder, driven by the service section's closed-loop client in a
child process: accepted commands/s over 100 games, and the CPU of the whole process tree (the
supervisor, the workers, the store) per accepted command. The load client (raw sockets, see
:class:`bench.service._Player`) runs on the same cores, so its own CPU per command is
given too: on two cores, what it spends is taken from the workers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.service import _drive, _free_port, process_cpu
from service.workers import default_workers

__all__ = ["worker_figures"]

_LAUNCH = (
    "import sys; from service.cli import main; from bench.service import BENCH; "
    "sys.exit(main(sys.argv[1:], engines={'bench': BENCH}))"
)


def _tree(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        path = Path(f"/proc/{current}/task/{current}/children")
        if path.exists():
            todo += [int(part) for part in path.read_text().split()]
    return found


def _tree_cpu(pid: int) -> float:
    return sum(process_cpu(each) for each in _tree(pid))


READY_WITHIN = 60.0


async def wait_ready(session: Any, base: str, timeout: float = READY_WITHIN) -> None:
    """Until ``base``'s ``/readyz`` answers 200 (the bench and the tests' served processes)."""
    import aiohttp

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            async with session.get(f"{base}/readyz") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError(f"donjon serve at {base} did not become ready within {timeout:g} s")


async def _ready(base: str) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        await wait_ready(session, base)


async def _run(workers: int, seconds: float, pool: concurrent.futures.Executor) -> tuple[float, float, float]:
    """(commands/s, CPU seconds of the process tree per command, CPU seconds of the load process
    per command) with ``workers`` workers."""
    loop = asyncio.get_running_loop()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {key: value for key, value in os.environ.items() if not key.startswith("DONJON_")}
    env.update(DONJON_WS_RATE="1e9", DONJON_WS_BURST="1e9", DONJON_WS_OUTBOX="100000", DONJON_LOG_FORMAT="json")
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        args = ["serve", "--workers", str(workers), "--port", str(port), "--data-dir", folder]
        proc = await asyncio.to_thread(
            subprocess.Popen,
            [sys.executable, "-c", _LAUNCH, *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            await _ready(base)
            await asyncio.sleep(1.0)  # every worker listening
            await loop.run_in_executor(pool, _drive, "throughput", base, {"games": 10, "seconds": 0.5})
            before = _tree_cpu(proc.pid)
            result = await loop.run_in_executor(pool, _drive, "throughput", base, {"games": 100, "seconds": seconds})
            spent = _tree_cpu(proc.pid) - before
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(proc.wait, 30)
            except subprocess.TimeoutExpired:
                proc.kill()
                await asyncio.to_thread(proc.wait)
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
