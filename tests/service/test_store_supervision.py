"""A node keeps its embedded store alive: SIGKILL of the ``valkey-server`` under a running
``donjon serve`` (one process, or a supervisor of two workers) and the node is ready again in
seconds with every event it had; a store that keeps dying makes the node exit 70."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from service.run.supervise import GAVE_UP, MAX_RESTARTS
from tests.service.test_crash_recovery import LAUNCH, ROOT, env, free_port, new_started_game, wait_ready

READY_AGAIN_WITHIN = 15.0


def serve(data_dir: Path, port: int, log: Path, workers: int = 1) -> subprocess.Popen[bytes]:
    environ = env()
    environ["DONJON_WORKERS"] = str(workers)
    environ["DONJON_DRAIN_MS"] = "0"
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "serve", "--data-dir", str(data_dir), "--port", str(port)],
        cwd=ROOT, env=environ, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True,
    )


def store_pid(node: subprocess.Popen[bytes]) -> int:
    """The ``valkey-server`` started by the node (its child, or its supervisor's)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name, ppid = stat[stat.index("(") + 1 : stat.rindex(")")], int(stat[stat.rindex(")") + 2 :].split()[1])
            if ppid == node.pid and name.startswith("valkey"):
                return int(entry.name)
        time.sleep(0.05)
    raise AssertionError("the node started no valkey-server")


async def events_of(session: aiohttp.ClientSession, base: str, game_id: str) -> list[dict]:
    async with session.get(f"{base}/games/{game_id}/events") as response:
        assert response.status == 200
        return (await response.json())["events"]


async def ready_again(session: aiohttp.ClientSession, base: str, within: float) -> float:
    """Seconds until ``/readyz`` answers 200."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        try:
            async with session.get(f"{base}/readyz") as response:
                if response.status == 200:
                    return time.monotonic() - started
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"not ready again within {within} s")


def events_logged(log: Path) -> list[str]:
    names = []
    for line in log.read_text().splitlines():
        try:
            names.append(json.loads(line)["event"])
        except (ValueError, KeyError):
            continue
    return names


@pytest.mark.timeout(120)
@pytest.mark.parametrize("workers", [1, 2])
async def test_a_killed_embedded_store_is_restarted_with_everything_it_had(tmp_path: Path, workers: int) -> None:
    port, log = free_port(), tmp_path / "serve.log"
    node = serve(tmp_path / "data", port, log, workers)
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            await wait_ready(session, base)
            game_id, _tokens = await new_started_game(session, base)
            before = await events_of(session, base, game_id)
            os.kill(store_pid(node), signal.SIGKILL)
            took = await ready_again(session, base, READY_AGAIN_WITHIN)
            # Ready again means serving again: the game is whole, and new games are made.
            assert await _events_once_up(session, base, game_id) == before
            game_after, _ = await new_started_game(session, base)
            assert game_after != game_id
        assert node.poll() is None, "the node exited instead of restarting its store"
    finally:
        os.killpg(node.pid, signal.SIGTERM)
        node.wait(timeout=30)
    assert {"embedded.died", "embedded.restarted"} <= set(events_logged(log)), took


async def _events_once_up(session: aiohttp.ClientSession, base: str, game_id: str) -> list[dict]:
    # A worker's pooled connection may meet the restart once; the next request reconnects.
    for _ in range(50):
        async with session.get(f"{base}/games/{game_id}/events") as response:
            if response.status == 200:
                return (await response.json())["events"]
        await asyncio.sleep(0.1)
    raise AssertionError("the game's events did not come back")


@pytest.mark.timeout(120)
async def test_a_store_that_keeps_dying_makes_the_node_exit_70(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "serve.log"
    node = serve(tmp_path / "data", port, log)
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            await wait_ready(session, base)
            for _ in range(MAX_RESTARTS):
                os.kill(store_pid(node), signal.SIGKILL)
                await ready_again(session, base, READY_AGAIN_WITHIN)
        os.kill(store_pid(node), signal.SIGKILL)  # one death more than the budget allows
        assert node.wait(timeout=30) == GAVE_UP
    finally:
        if node.poll() is None:
            os.killpg(node.pid, signal.SIGKILL)
            node.wait()
    assert "embedded.gave_up" in events_logged(log)
