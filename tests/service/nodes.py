"""Real ``donjon serve`` processes for node-failure tests: started on a store (one Valkey or a
cluster), each in its own process group, killed with SIGKILL, and what the tests read and check
through them (used by tests/service/test_node_failure.py and test_cluster_node_failure.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp

from events.store import EventStore
from games import default_engines
from games.base import Engine
from service.fairness.replay import replay_game
from tests.service.conftest import TEST_VAULT
from tests.service.test_crash_recovery import LAUNCH, ROOT, env, free_port, group_gone, wait_ready
from tests.tinygame import TINY

LAUNCH_EVERY_GAME = LAUNCH.replace("engines={'tiny': TINY}", "engines={**default_engines(), 'tiny': TINY}").replace(
    "from tests.tinygame import TINY;", "from tests.tinygame import TINY; from games import default_engines;"
)
"""Serves every game of the registry and the tiny game."""
ENGINES: dict[str, Engine] = {**default_engines(), "tiny": TINY}


async def connect(url: str) -> EventStore:
    """A store on ``url``, a cluster when the server is one."""
    return await EventStore.connect(url, cluster=None)


TAKEOVER_MS = 1000
MARGIN = 3.0
"""Seconds allowed on top of the takeover delay and its jitter (process scheduling on a busy box)."""
FIRST_MOVE_WITHIN = TAKEOVER_MS / 1000 * 1.5 + MARGIN


class Nodes:
    """``donjon serve`` processes on one store, each in its own process group, all killed at the end."""

    def __init__(self, url: str, logs: Path, launch: str = LAUNCH) -> None:
        self.url = url
        self.launch = launch
        self.logs = logs
        self.procs: list[subprocess.Popen[bytes]] = []

    async def start(self, session: aiohttp.ClientSession, **settings: Any) -> tuple[subprocess.Popen[bytes], str]:
        port = free_port()
        environ = env()
        environ["DONJON_REDIS_URL"] = self.url
        environ["DONJON_BOT_TAKEOVER_MS"] = str(TAKEOVER_MS)
        environ.update({f"DONJON_{key.upper()}": str(value) for key, value in settings.items()})
        proc = _spawn(self.launch, port, environ, self.logs / f"node-{len(self.procs)}.log")
        self.procs.append(proc)
        base = f"http://127.0.0.1:{port}"
        await wait_ready(session, base)
        return proc, base

    @staticmethod
    def kill(proc: subprocess.Popen[bytes]) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert group_gone(proc.pid)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _spawn(launch: str, port: int, environ: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", launch, "serve", "--port", str(port)],
        cwd=ROOT,
        env=environ,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


async def post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> dict[str, Any]:
    async with session.post(url, json=body) as response:
        assert response.status in (200, 201), await response.text()
        return await response.json()


async def spectate(session: aiohttp.ClientSession, base: str, game_id: str) -> aiohttp.ClientWebSocketResponse:
    ws = await session.ws_connect(f"{base}/games/{game_id}/ws")
    await ws.send_json({"type": "hello"})
    return ws


async def frames_until(ws: aiohttp.ClientWebSocketResponse, done: Any, within: float) -> dict[str, Any]:
    """Read frames until ``done(frame)``; that frame. Fails after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        frame = await ws.receive_json(timeout=max(0.01, deadline - time.monotonic()))
        if done(frame):
            return frame


async def check_log(url: str, game_id: str) -> list[Any]:
    """The game's events: versions without a gap, no command applied twice, replay finds nothing."""
    store = await connect(url)
    try:
        envelopes = await store.read(game_id)
        assert [e.version for e in envelopes] == list(range(1, len(envelopes) + 1))
        ids = [e.command_id for e in envelopes if e.command is not None and e.command_id]
        assert len(ids) == len(set(ids)), "a command was applied twice"
        report = await replay_game(store, game_id, ENGINES, TEST_VAULT)  # the nodes' key (env())
        assert report.problems == []
        return envelopes
    finally:
        await store.close()


async def play_when_my_turn(ws: aiohttp.ClientWebSocketResponse, first: dict[str, Any], acks: int) -> int:
    """Play the first legal command whenever this seat may (on a view that includes its last
    acknowledged move), until ``acks`` commands were acknowledged or the game ends; the version
    of the last ack (0 if none)."""
    view, version, status = first["view"], first["version"], first["status"]
    done, sent, last = 0, None, 0
    while done < acks and status != "finished":
        if sent is None and version >= last and view.get("legal"):
            sent = uuid.uuid4().hex[:12]
            await ws.send_json({"type": "command", "id": sent, "command": view["legal"][0]})
        frame = await ws.receive_json(timeout=20)
        if frame["type"] in ("update", "snapshot"):
            view, version, status = frame["view"], frame["version"], frame["status"]
        elif frame["type"] == "ack" and frame["id"] == sent:
            done, sent, last = done + 1, None, frame["version"]
        elif frame["type"] == "error":
            raise AssertionError(f"a command legal in the latest view was refused: {frame}")
    return last


async def human_seat(session: aiohttp.ClientSession, base: str, game_id: str, token: str) -> tuple[Any, dict]:
    ws = await session.ws_connect(f"{base}/games/{game_id}/ws")
    await ws.send_json({"type": "hello", "token": token})
    return ws, await ws.receive_json(timeout=10)
