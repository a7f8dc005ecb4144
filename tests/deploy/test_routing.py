"""The shipped HAProxy configuration, checked by HAProxy itself and run in front of three real
``donjon serve`` nodes: every request and socket of one game reaches one node, and games spread.

HAProxy comes from Debian's package (``.ci/run`` installs it next to Chromium)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.service.nodes import Nodes, post
from tests.service.test_crash_recovery import free_port

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "deploy" / "haproxy.cfg"
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"


def test_the_shipped_configuration_is_valid() -> None:
    result = subprocess.run(
        [HAPROXY, "-c", "-f", str(SHIPPED)], env={**os.environ, "DONJON_API": "api"},
        capture_output=True, text=True, timeout=30,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def shipped_balancing() -> list[str]:
    """The backend's balancing lines of the shipped file, which the local proxy below reuses."""
    backend = SHIPPED.read_text().split("backend donjon", 1)[1]
    lines = [line.strip() for line in backend.splitlines()]
    kept = [line for line in lines if re.match(r"(balance|hash-type|http-response)\b", line)]
    assert any(line.startswith("balance hash") for line in kept), kept
    return kept


def local_config(port: int, nodes: list[str]) -> str:
    servers = "\n".join(
        f"    server node{n} {base.removeprefix('http://')} check inter 500ms" for n, base in enumerate(nodes)
    )
    balancing = "\n".join(f"    {line}" for line in shipped_balancing())
    return f"""global
    maxconn 1000
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout tunnel 60s
frontend donjon_in
    bind 127.0.0.1:{port}
    default_backend donjon
backend donjon
{balancing}
{servers}
"""


@pytest.fixture
async def balanced(tmp_path: Path, embedded_redis_url: str) -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    nodes = Nodes(embedded_redis_url, tmp_path)
    proxy: subprocess.Popen[bytes] | None = None
    async with aiohttp.ClientSession() as session:
        try:
            bases = [(await nodes.start(session))[1] for _ in range(3)]
            port = free_port()
            config = tmp_path / "haproxy.cfg"
            config.write_text(local_config(port, bases))
            proxy = subprocess.Popen([HAPROXY, "-db", "-f", str(config)], start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            front = f"http://127.0.0.1:{port}"
            await _wait_up(session, front)
            yield session, front
        finally:
            if proxy is not None:
                os.killpg(proxy.pid, signal.SIGKILL)
                proxy.wait()
            nodes.stop_all()


async def _wait_up(session: aiohttp.ClientSession, front: str) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            async with session.get(f"{front}/readyz") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        assert time.monotonic() < deadline, "HAProxy did not come up"
        await asyncio.sleep(0.1)


async def served_by(session: aiohttp.ClientSession, url: str) -> str:
    async with session.get(url) as response:
        assert response.status == 200, await response.text()
        return response.headers["X-Donjon-Server"]


async def test_every_request_and_socket_of_a_game_reaches_one_node(
    balanced: tuple[aiohttp.ClientSession, str],
) -> None:
    session, front = balanced
    homes: dict[str, str] = {}
    for _ in range(12):
        game_id = (await post(session, f"{front}/games", {"game": "tiny", "seats": 2}))["id"]
        await post(session, f"{front}/games/{game_id}/seats", {"name": "ann"})
        routes = ["", "/events", "/state"]
        servers = {await served_by(session, f"{front}/games/{game_id}{route}") for route in routes}
        async with session.ws_connect(f"{front}/games/{game_id}/ws") as ws:
            # The handshake's headers: aiohttp keeps the upgrade response only under this name.
            servers.add(ws._response.headers["X-Donjon-Server"])
        assert len(servers) == 1, f"game {game_id} was served by {sorted(servers)}"
        homes[game_id] = servers.pop()
    # Twelve games on a ring of three nodes: all on one node would mean the hash ignores the id.
    assert len(set(homes.values())) >= 2, homes
