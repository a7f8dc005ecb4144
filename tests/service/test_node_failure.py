"""Node failure with real processes: two or more ``donjon serve`` nodes on one Valkey server the
test starts itself (not the session's: the due-bots index must be this test's own), nodes killed
with SIGKILL, and what the live nodes or a restart do about it.

* The node driving a bot-only game dies; another node that watches the game (a spectator socket)
  finishes it, its first move coming within the takeover time plus a margin.
* The driver dies right after a human's move that followed a bot's turn: the watching node makes
  the bot's move, and the human finishes the game there.
* Every node dies; a restarted node finds the bot games in the due-bots index and finishes them
  without any request.
* A seat request is retried on another node after the first node answered and died: the same
  seat and token; another request id takes another seat.

The watching nodes run without the due-bots sweep (``DONJON_BOT_SWEEP_MS=0``) in the first two,
so only the takeover watch their stream reader re-arms can save the game.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from events.due import DueBots
from events.embedded import EmbeddedServer
from events.store import EventStore
from service.replay import replay_game
from tests.service.conftest import TEST_VAULT
from tests.service.test_crash_recovery import (
    LAUNCH,
    ROOT,
    env,
    free_port,
    group_gone,
    wait_ready,
)
from tests.tinygame import TINY

TAKEOVER_MS = 1000
MARGIN = 3.0
"""Seconds allowed on top of the takeover delay and its jitter (process scheduling on a busy box)."""
FIRST_MOVE_WITHIN = TAKEOVER_MS / 1000 * 1.5 + MARGIN


class Nodes:
    """``donjon serve`` processes on one store, each in its own process group, all killed at the end."""

    def __init__(self, url: str, logs: Path) -> None:
        self.url = url
        self.logs = logs
        self.procs: list[subprocess.Popen[bytes]] = []

    async def start(self, session: aiohttp.ClientSession, **settings: Any) -> tuple[subprocess.Popen[bytes], str]:
        port = free_port()
        environ = env()
        environ["DONJON_REDIS_URL"] = self.url
        environ["DONJON_BOT_TAKEOVER_MS"] = str(TAKEOVER_MS)
        environ.update({f"DONJON_{key.upper()}": str(value) for key, value in settings.items()})
        proc = _spawn(port, environ, self.logs / f"node-{len(self.procs)}.log")
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


def _spawn(port: int, environ: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "serve", "--port", str(port)],
        cwd=ROOT,
        env=environ,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@pytest.fixture
def valkey(tmp_path: Path) -> Iterator[str]:
    server = EmbeddedServer(tmp_path / "valkey", fsync="everysec").start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
async def nodes(valkey: str, tmp_path: Path) -> AsyncIterator[Nodes]:
    running = Nodes(valkey, tmp_path)
    try:
        yield running
    finally:
        running.stop_all()


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
    store = await EventStore.connect(url)
    try:
        envelopes = await store.read(game_id)
        assert [e.version for e in envelopes] == list(range(1, len(envelopes) + 1))
        ids = [e.command_id for e in envelopes if e.command is not None and e.command_id]
        assert len(ids) == len(set(ids)), "a command was applied twice"
        report = await replay_game(store, game_id, {"tiny": TINY}, TEST_VAULT)
        assert report.problems == []
        return envelopes
    finally:
        await store.close()


@pytest.mark.timeout(120)
async def test_a_watching_node_finishes_a_bot_game_whose_driver_was_killed(nodes: Nodes) -> None:
    async with aiohttp.ClientSession() as session:
        driver, base_a = await nodes.start(session, bot_delay_ms=150, bot_sweep_ms=0)
        _, base_b = await nodes.start(session, bot_sweep_ms=0)
        body = {"game": "tiny", "seats": 2, "bots": {"0": "random", "1": "random"}, "bots_only": True}
        game_id = (await post(session, f"{base_a}/games", body))["id"]
        ws = await spectate(session, base_b, game_id)
        seen = await frames_until(ws, lambda f: f.get("version", 0) >= 9, within=20)
        assert seen["status"] == "active", "the game ended before the driver could be killed"
        nodes.kill(driver)
        killed_at, version_then = time.monotonic(), seen["version"]
        moved = await frames_until(ws, lambda f: f.get("version", 0) > version_then + 1, within=FIRST_MOVE_WITHIN + 5)
        first_move_after = time.monotonic() - killed_at
        if moved["status"] != "finished":
            await frames_until(ws, lambda f: f.get("status") == "finished", within=30)
        await ws.close()
    # The killed node may have had one move in flight; what came after is the watcher's.
    assert first_move_after <= FIRST_MOVE_WITHIN, f"the first move after the kill took {first_move_after:.1f} s"
    envelopes = await check_log(nodes.url, game_id)
    assert envelopes[-1].type == "game.finished"


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


@pytest.mark.timeout(120)
async def test_the_driver_killed_right_after_a_humans_move_that_followed_a_bot_turn(nodes: Nodes) -> None:
    async with aiohttp.ClientSession() as session:
        # The driver pauses 600 ms between its bot moves (below the 1 s takeover): each human move
        # lands while the driver sleeps, and the kill comes right after a human's ack.
        driver, base_a = await nodes.start(session, bot_delay_ms=600, bot_sweep_ms=0)
        _, base_b = await nodes.start(session, bot_sweep_ms=0)
        game_id = (await post(session, f"{base_a}/games", {"game": "tiny", "seats": 2, "bots": {"0": "first"}}))["id"]
        token = (await post(session, f"{base_a}/games/{game_id}/seats", {"name": "ann"}))["token"]
        spectator = await spectate(session, base_b, game_id)
        await frames_until(spectator, lambda f: f["type"] == "snapshot", within=10)
        ws, first = await human_seat(session, base_a, game_id, token)
        acked = await play_when_my_turn(ws, first, acks=2)
        assert acked > 0, "the game ended before the human moved twice"
        nodes.kill(driver)
        killed_at = time.monotonic()
        store = await EventStore.connect(nodes.url)
        try:
            after_human = await store.read(game_id, acked + 1)
        finally:
            await store.close()
        assert after_human == [], "the driver made the bot's move before it was killed; nothing was tested"
        bot_move = await frames_until(spectator, lambda f: f.get("version", 0) > acked, within=FIRST_MOVE_WITHIN + 5)
        took = time.monotonic() - killed_at
        assert took <= FIRST_MOVE_WITHIN, f"the bot's move after the kill took {took:.1f} s"
        assert bot_move["status"] in ("active", "finished")
        # the human goes on at the surviving node, to the end
        ws_b, first_b = await human_seat(session, base_b, game_id, token)
        await play_when_my_turn(ws_b, first_b, acks=100)
        await ws_b.close()
        await spectator.close()
    envelopes = await check_log(nodes.url, game_id)
    assert envelopes[-1].type == "game.finished"
    assert envelopes[acked].actor == 0 and envelopes[acked].command_id == f"bot:0:{acked}"


@pytest.mark.timeout(150)
async def test_after_a_full_restart_bot_games_resume_without_any_request(nodes: Nodes) -> None:
    body = {"game": "tiny", "seats": 2, "bots": {"0": "random", "1": "first"}, "bots_only": True}
    async with aiohttp.ClientSession() as session:
        first_a, base_a = await nodes.start(session, bot_delay_ms=300)
        first_b, _ = await nodes.start(session, bot_delay_ms=300)
        games = [(await post(session, f"{base_a}/games", body))["id"] for _ in range(4)]
        await asyncio.sleep(1.0)  # a few moves each, far from the end
        nodes.kill(first_a)
        nodes.kill(first_b)
        store = await EventStore.connect(nodes.url)
        try:
            stalled = {game_id: await store.version(game_id) for game_id in games}
            for game_id, version in stalled.items():
                assert (await store.read(game_id, version))[-1].type != "game.finished", "ended before the kill"
            _, base = await nodes.start(session, bot_sweep_ms=200)
            deadline = time.monotonic() + 60
            finished: set[str] = set()
            while finished != set(games) and time.monotonic() < deadline:
                for game_id in set(games) - finished:
                    last = (await store.read(game_id, await store.version(game_id)))[-1]
                    if last.type == "game.finished":
                        finished.add(game_id)
                await asyncio.sleep(0.2)
            assert finished == set(games), f"not resumed: {set(games) - finished} (stalled at {stalled})"
            assert await _due_listings(store) == 0, "finished games must leave the due-bots index"
        finally:
            await store.close()
        async with session.get(f"{base}/metrics") as response:
            text = await response.text()
        counted = [line for line in text.splitlines() if line.startswith("donjon_http_requests_total{")]
        routes = {line.split('route="')[1].split('"')[0] for line in counted}
        assert routes == {"/readyz"}, f"requests other than readiness probes reached the node: {routes}"
    for game_id in games:
        await check_log(nodes.url, game_id)


async def _due_listings(store: EventStore) -> int:
    """How many games the due-bots index still lists, once the sweep had 10 s to unlist them."""
    due = DueBots(store)
    for _ in range(50):
        if not await due.count():
            return 0
        await asyncio.sleep(0.2)
    return await due.count()


@pytest.mark.timeout(90)
async def test_a_seat_request_retried_after_its_reply_was_lost_gets_the_same_seat_and_token(nodes: Nodes) -> None:
    async with aiohttp.ClientSession() as session:
        first, base_a = await nodes.start(session)
        _, base_b = await nodes.start(session)
        game_id = (await post(session, f"{base_a}/games", {"game": "tiny", "seats": 2}))["id"]
        request_id = str(uuid.uuid4())
        lost = await post(session, f"{base_a}/games/{game_id}/seats", {"name": "ann", "request_id": request_id})
        nodes.kill(first)  # the node that answered is gone, and the client never read its reply
        retried = await post(session, f"{base_b}/games/{game_id}/seats", {"name": "ann", "request_id": request_id})
        assert (retried["seat"], retried["token"]) == (lost["seat"], lost["token"])
        other = await post(session, f"{base_b}/games/{game_id}/seats", {"name": "bob", "request_id": str(uuid.uuid4())})
        assert other["seat"] != lost["seat"] and other["status"] == "active"
        ws, snapshot = await human_seat(session, base_b, game_id, retried["token"])
        assert snapshot["type"] == "snapshot" and snapshot.get("seat") == lost["seat"]
        await ws.close()
    envelopes = await check_log(nodes.url, game_id)
    assert [e.type for e in envelopes].count("game.seat_taken") == 2
