"""The server processes the bench starts, and the CPU they spend, from ``/proc``.

A measured server runs as a process of its own, in a session of its own
(``start_new_session``), so that its CPU is its own and it can be stopped with everything it
started: ``donjon serve`` with the bench's games (:func:`donjon_serve`, the embedded Valkey
below it), or boardgame.io's node server (:mod:`bench.peers`). :func:`spawned` starts one,
waits until it answers, and stops it. The CPU of a process and of every process below it is read
from ``/proc/<pid>/stat`` (:func:`tree_cpu`). A served process and a load process both raise
their file limit (:func:`raise_fd_limit`) for a thousand sockets, and listen on or dial a port
:func:`free_port` found.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "donjon_serve", "free_port", "raise_fd_limit", "serve_env", "spawned", "stop", "tree", "tree_cpu", "wait_ready",
    "READY_WITHIN",
]

READY_WITHIN = 60.0

_LAUNCH = (
    "import sys, games; from bench.die_game import BENCH; from bench.mirror import MIRROR; "
    "from bench.processes import raise_fd_limit; "
    "from service.run.cli import main; raise_fd_limit(); sys.exit(main(sys.argv[1:], engines={engines}))"
)
"""``donjon serve`` run by its own CLI, serving the bench's games, which are in no catalog; its
file limit raised as an operator would (``ulimit -n``) for a thousand sockets."""


def donjon_serve(engines: str, port: int, folder: str, workers: int) -> list[str]:
    """The command line of ``donjon serve --workers N`` on an embedded Valkey with fsync always in
    ``folder``, serving ``engines`` (a Python expression over ``BENCH``, ``MIRROR``, ``games``)."""
    args = ["serve", "--workers", str(workers), "--port", str(port), "--data-dir", folder, "--fsync", "always"]
    return [sys.executable, "-c", _LAUNCH.format(engines=engines), *args]


def serve_env() -> dict[str, str]:
    """The environment of a bench's ``donjon serve``: this one without any ``DONJON_`` setting
    but the bench's own (no rate limit, a deep outbox, JSON logs at ``info``, as in production)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("DONJON_")}
    env.update(DONJON_WS_RATE="1e9", DONJON_WS_BURST="1e9", DONJON_WS_OUTBOX="100000", DONJON_LOG_FORMAT="json")
    return env


async def wait_ready(session: Any, base: str, timeout: float = READY_WITHIN, path: str = "/readyz") -> None:
    """Until ``base + path`` answers 200 (the bench's and the tests' served processes)."""
    import aiohttp

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            async with session.get(f"{base}{path}") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError(f"the server at {base} did not become ready within {timeout:g} s")


@contextlib.asynccontextmanager
async def spawned(
    argv: Sequence[str], base: str, *, env: dict[str, str] | None = None, cwd: str | None = None, path: str = "/readyz"
) -> AsyncIterator[subprocess.Popen[bytes]]:
    """The server ``argv``, in a session of its own, once ``base + path`` answers; stopped after."""
    import aiohttp

    process = await asyncio.to_thread(
        subprocess.Popen,
        list(argv),
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        async with aiohttp.ClientSession() as session:
            await wait_ready(session, base, path=path)
        yield process
    finally:
        await asyncio.to_thread(stop, process)


def stop(process: subprocess.Popen[Any], grace: float = 30.0) -> None:
    """SIGTERM to ``process`` (a supervisor stops its workers and store itself), SIGKILL after
    ``grace`` seconds; then SIGKILL to whatever of its session is left."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # its session's group: only what it started


def tree(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        path = Path(f"/proc/{current}/task/{current}/children")
        with contextlib.suppress(OSError):
            todo += [int(part) for part in path.read_text().split()]
    return found


def process_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) process ``pid`` has used, from ``/proc`` (0 when unknown)."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and every process below it."""
    return sum(process_cpu(each) for each in tree(pid))


def raise_fd_limit() -> None:
    """This process's open-file limit up to its hard limit, as an operator would (``ulimit -n``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port() -> int:
    """A localhost port nothing listens on now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
