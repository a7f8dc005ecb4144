"""``donjon serve --workers 2`` as real processes: one supervisor, two workers on one port, the
embedded Valkey started once.

* Both workers take connections on the one port.
* A spectator whose socket a worker holds sees the command a player sent through the other.
* SIGTERM to the supervisor ends the workers and the embedded store; it exits 0.
* SIGKILL of one worker: the other serves on, and the supervisor starts a new one.

Which worker holds a connection is read from ``/proc``: the server process whose socket has
the client's port as its peer.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from service.run.routing import worker_for
from tests.service.test_crash_recovery import LAUNCH, ROOT, env, free_port, group_gone, new_started_game, wait_ready

WITHIN = 20.0
"""Seconds any one step may take on a busy machine."""


class Served:
    """The supervisor process, its port and its log."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.base = f"http://127.0.0.1:{port}"
        self.log = log

    def lines(self) -> list[dict[str, Any]]:
        found = []
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("{"):
                found.append(json.loads(line))
        return found

    def workers(self) -> list[int]:
        """The pids of the running workers (the supervisor's children but the store and the router)."""
        return sorted(pid for pid in _children(self.proc.pid) if _name(pid).startswith("donjon-worker"))

    def router(self) -> list[int]:
        return [pid for pid in _children(self.proc.pid) if _name(pid) == "donjon-router"]

    def store(self) -> list[int]:
        return [pid for pid in _children(self.proc.pid) if "valkey" in _command(pid)]


async def until(condition: Any, within: float = WITHIN) -> bool:
    """Whether ``condition()`` came true within ``within`` seconds (polled: it reads ``/proc``)."""
    for _ in range(int(within / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return bool(condition())


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(part) for part in path.read_text().split()] if path.exists() else []


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except FileNotFoundError:
        return ""


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except FileNotFoundError:
        return ""


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def worker_of(served: Served, client_port: int) -> int | None:
    """The worker whose accepted socket has ``client_port`` as its peer port."""
    by_inode: dict[int, int] = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote_port = int(fields[2].rsplit(":", 1)[1], 16)
        if remote_port == client_port:
            by_inode[int(fields[9])] = remote_port
    for pid in served.workers():
        if _socket_inodes(pid) & set(by_inode):
            return pid
    return None


def _client_port(ws: aiohttp.ClientWebSocketResponse) -> int:
    connection = ws._response.connection
    assert connection is not None and connection.transport is not None
    return int(connection.transport.get_extra_info("sockname")[1])


@pytest.fixture(params=["game"])
def served(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Served]:
    """``donjon serve --workers 2``, its connections routed by game (the default) or, with the
    parameter ``kernel``, spread by the kernel."""
    port = free_port()
    log = tmp_path / "serve.log"
    environ = env()
    environ["DONJON_NODE_ID"] = "wk"
    environ["DONJON_WORKER_ROUTING"] = request.param
    args = ["serve", "--workers", "2", "--port", str(port), "--data-dir", str(tmp_path / "d")]
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args],
        cwd=ROOT,
        env=environ,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield Served(proc, port, log)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
async def session(served: Served) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        await wait_ready(client, served.base)
        await until(lambda: len(served.workers()) == 2)
        seen: set[str] = set()
        for _ in range(400):  # both workers listening, not only started
            seen.add(await _node_of_fresh_connection(served.base))
            if len(seen) == 2:
                break
            await asyncio.sleep(0.05)
        assert seen == {"wk-0", "wk-1"}
        yield client


async def _node_of_fresh_connection(base: str) -> str:
    """The ``node`` label of the worker's own series (``/metrics?scope=worker``) answered over a
    connection of its own."""
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as one,
        one.get(f"{base}/metrics", params={"scope": "worker"}) as response,
    ):
        assert response.status == 200
        text = await response.text()
    for line in text.splitlines():
        if line.startswith("donjon_build_info{"):
            return line.split('node="', 1)[1].split('"', 1)[0]
    raise AssertionError("no donjon_build_info series")


@pytest.mark.timeout(120)
async def test_two_workers_serve_one_port_on_one_store(served: Served, session: aiohttp.ClientSession) -> None:
    assert len(served.workers()) == 2
    assert len(served.store()) == 1, "the embedded store is started once, by the supervisor"
    nodes = {await _node_of_fresh_connection(served.base) for _ in range(50)}
    assert nodes <= {"wk-0", "wk-1"}, "every connection is answered by one of the two workers"
    started = [line for line in served.lines() if line.get("event") == "serve.workers"]
    assert started and started[0]["workers"] == 2


async def _socket_on(
    session: aiohttp.ClientSession, served: Served, game_id: str, worker: int | None, avoid: int | None = None
) -> tuple[aiohttp.ClientWebSocketResponse, int]:
    """A spectator socket held by ``worker`` (any when ``None``), not by ``avoid``."""
    for _ in range(100):
        ws = await session.ws_connect(f"{served.base}/games/{game_id}/ws")
        holder = worker_of(served, _client_port(ws))
        if holder is not None and (worker is None or holder == worker) and holder != avoid:
            return ws, holder
        await ws.close()
    raise AssertionError("no socket reached the wanted worker in 100 connections")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("served", ["kernel"], indirect=True)
async def test_spectators_on_one_worker_see_commands_taken_on_another(
    served: Served, session: aiohttp.ClientSession
) -> None:
    game_id, tokens = await new_started_game(session, served.base)
    player, player_worker = await _socket_on(session, served, game_id, None)
    spectator, spectator_worker = await _socket_on(session, served, game_id, None, avoid=player_worker)
    assert player_worker != spectator_worker
    await spectator.send_json({"type": "hello"})
    watched = await spectator.receive_json(timeout=WITHIN)
    await player.send_json({"type": "hello", "token": tokens[0]})
    first = await player.receive_json(timeout=WITHIN)
    assert first["view"]["legal"], "seat 0 moves first in the tiny game"
    await player.send_json({"type": "command", "id": "c1", "command": first["view"]["legal"][0]})
    acked = None
    while acked is None:
        frame = await player.receive_json(timeout=WITHIN)
        if frame["type"] == "ack":
            acked = frame["version"]
    update = await spectator.receive_json(timeout=WITHIN)
    assert update["type"] == "update"
    assert update["version"] == acked > watched["version"]
    await player.close()
    await spectator.close()


@pytest.mark.timeout(120)
async def test_sigterm_stops_every_worker_and_the_embedded_store(
    served: Served, session: aiohttp.ClientSession
) -> None:
    everyone = [*served.workers(), *served.store(), *served.router()]
    assert len(everyone) == 4
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=WITHIN) == 0
    assert group_gone(served.proc.pid), "a worker or the store outlived the supervisor's SIGTERM"
    events = [line.get("event") for line in served.lines()]
    assert "embedded.stopped" in events


@pytest.mark.timeout(120)
async def test_a_worker_killed_leaves_the_other_serving(served: Served, session: aiohttp.ClientSession) -> None:
    victim, survivor = served.workers()
    os.kill(victim, signal.SIGKILL)
    assert await until(lambda: victim not in served.workers())
    for _ in range(20):  # every new connection is served meanwhile, by the survivor at least
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as one,
            one.get(f"{served.base}/readyz") as response,
        ):
            assert response.status == 200
    game_id, tokens = await new_started_game(session, served.base)
    ws = await session.ws_connect(f"{served.base}/games/{game_id}/ws")
    await ws.send_json({"type": "hello", "token": tokens[0]})
    first = await ws.receive_json(timeout=WITHIN)
    await ws.send_json({"type": "command", "id": "c1", "command": first["view"]["legal"][0]})
    frames = [await ws.receive_json(timeout=WITHIN) for _ in range(2)]
    assert any(frame["type"] == "ack" for frame in frames)
    await ws.close()
    assert survivor in served.workers()
    restarted = await until(lambda: len(served.workers()) == 2)
    assert restarted, "the supervisor starts a new worker in the killed one's place"
    assert any(line.get("event") == "serve.worker_exited" for line in served.lines())


@pytest.mark.timeout(120)
def test_workers_that_refuse_their_settings_stop_the_supervisor_with_status_2(tmp_path: Path) -> None:
    environ = env()
    environ["DONJON_CASTLE_DATA"] = str(tmp_path / "no-such-dataset.json")
    args = ["serve", "--workers", "2", "--port", str(free_port()), "--data-dir", str(tmp_path / "d")]
    done = subprocess.run(  # the real games: The Castle reads the dataset
        [sys.executable, "-m", "service", *args], cwd=ROOT, env=environ, capture_output=True, timeout=WITHIN * 3
    )
    assert done.returncode == 2
    assert b"no-such-dataset" in done.stderr


@pytest.mark.timeout(120)
async def test_every_scrape_shows_the_whole_server(served: Served, session: aiohttp.ClientSession) -> None:
    created = 0
    for _ in range(6):
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as one,
            one.post(f"{served.base}/games", json={"game": "tiny", "seats": 2}) as response,
        ):
            assert response.status == 201
            created += 1
    for _ in range(12):  # fresh connections: the kernel picks either worker to answer
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as one,
            one.get(f"{served.base}/metrics") as response,
        ):
            text = await response.text()
        families = {family.name: family for family in text_string_to_metric_families(text)}
        workers = {sample.labels["worker"] for sample in families["donjon_build_info"].samples}
        assert workers == {"0", "1"}
        games = sum(sample.value for sample in families["donjon_games_created"].samples if sample.name.endswith("_total"))
        assert games == created, "a scrape must count every worker's games"
        assert [sample.value for sample in families["donjon_scrape_workers"].samples] == [2.0]


def _index_of(pid: int) -> int:
    return int(_name(pid).rsplit("-", 1)[1])


@pytest.mark.timeout(120)
async def test_every_connection_of_one_game_reaches_the_worker_its_id_hashes_to(
    served: Served, session: aiohttp.ClientSession
) -> None:
    games = [(await new_started_game(session, served.base))[0] for _ in range(4)]
    for game_id in games:
        holders = set()
        for _ in range(6):  # each a new connection, as a browser opens every websocket
            async with aiohttp.ClientSession() as fresh, fresh.ws_connect(f"{served.base}/games/{game_id}/ws") as ws:
                holder = worker_of(served, _client_port(ws))
                assert holder is not None
                holders.add(_index_of(holder))
        assert holders == {worker_for(game_id, 2)}, f"game {game_id}: its sockets reached workers {holders}"


@pytest.mark.timeout(120)
async def test_a_dead_workers_games_are_served_by_the_other_meanwhile(
    served: Served, session: aiohttp.ClientSession
) -> None:
    game_id, tokens = await new_started_game(session, served.base)
    owner = next(pid for pid in served.workers() if _index_of(pid) == worker_for(game_id, 2))
    os.kill(owner, signal.SIGKILL)
    assert await until(lambda: owner not in served.workers())
    async with aiohttp.ClientSession() as fresh:
        await _play_one_command_through_another_worker(served, fresh, game_id, tokens[0])


async def _play_one_command_through_another_worker(
    served: Served, session: aiohttp.ClientSession, game_id: str, token: str
) -> None:
    ws = await session.ws_connect(f"{served.base}/games/{game_id}/ws")
    holder = worker_of(served, _client_port(ws))
    assert holder is not None and _index_of(holder) != worker_for(game_id, 2)
    await ws.send_json({"type": "hello", "token": token})
    first = await ws.receive_json(timeout=WITHIN)
    await ws.send_json({"type": "command", "id": "c1", "command": first["view"]["legal"][0]})
    frames = [await ws.receive_json(timeout=WITHIN) for _ in range(2)]
    assert any(frame["type"] == "ack" for frame in frames)
    await ws.close()


@pytest.mark.timeout(120)
async def test_a_killed_router_is_started_again_and_no_connection_is_refused_meanwhile(
    served: Served, session: aiohttp.ClientSession
) -> None:
    [router] = served.router()
    os.kill(router, signal.SIGKILL)
    for _ in range(10):  # queued in the supervisor's socket until the new router takes them
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as one,
            one.get(f"{served.base}/readyz", timeout=aiohttp.ClientTimeout(total=WITHIN)) as response,
        ):
            assert response.status == 200
    assert await until(lambda: len(served.router()) == 1 and served.router() != [router])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.timeout(120)
async def test_a_request_line_that_comes_in_pieces_is_routed_without_the_router_spinning(
    served: Served, session: aiohttp.ClientSession
) -> None:
    [router] = served.router()
    host, port = served.base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"GET /rea")
    await writer.drain()
    before = _cpu_seconds(router)
    await asyncio.sleep(1.0)  # the router has seen bytes but no end of line all this time
    assert _cpu_seconds(router) - before < 0.3, "the router spun on bytes it had peeked already"
    writer.write(b"dyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), WITHIN)
    assert answer.startswith(b"HTTP/1.1 200")
    writer.close()
