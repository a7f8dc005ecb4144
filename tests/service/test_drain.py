"""Drain on SIGTERM, with real ``donjon serve`` processes on one store: ``/readyz`` and new work
answer 503 ``draining`` at once while open sockets still play, sockets then close with 1001 and
a reconnect reason, bot duty moves to another node, the process exits 0 with no traceback; and a
rolling restart of three nodes under load loses nothing, doubles nothing, and shows clients
nothing but reconnects."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.service.nodes import Nodes, check_log, frames_until, human_seat, post, spectate

DRAIN_MS = 1500


@pytest.fixture
async def nodes(valkey: str, tmp_path: Path) -> AsyncIterator[Nodes]:
    running = Nodes(valkey, tmp_path)
    try:
        yield running
    finally:
        running.stop_all()


def terminate(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGTERM)


def log_lines(path: Path) -> list[dict[str, Any]]:
    lines = []
    for line in path.read_text().splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            lines.append({"event": "not-json", "line": line})
    return lines


async def status_of(session: aiohttp.ClientSession, method: str, url: str, **kw: Any) -> tuple[int, Any]:
    async with session.request(method, url, **kw) as response:
        return response.status, await response.json()


async def new_tiny_game(session: aiohttp.ClientSession, base: str) -> tuple[str, list[str]]:
    game_id = (await post(session, f"{base}/games", {"game": "tiny", "seats": 2, "options": {"target": 20}}))["id"]
    tokens = [(await post(session, f"{base}/games/{game_id}/seats", {"name": name}))["token"] for name in ("ann", "bob")]
    return game_id, tokens


@pytest.mark.timeout(120)
async def test_sigterm_drains_then_exits_cleanly(nodes: Nodes, tmp_path: Path) -> None:
    async with aiohttp.ClientSession() as session:
        proc, base = await nodes.start(session, drain_ms=DRAIN_MS)
        game_id, tokens = await new_tiny_game(session, base)
        seats = [await human_seat(session, base, game_id, token) for token in tokens]
        watcher = await spectate(session, base, game_id)
        await frames_until(watcher, lambda f: f["type"] == "snapshot", within=10)

        terminate(proc)
        stopped_at = time.monotonic()
        status, body = await _until_draining(session, base)
        assert (status, body["status"], body["error"]["code"]) == (503, "draining", "draining")
        status, body = await status_of(session, "POST", f"{base}/games", json={"game": "tiny", "seats": 2})
        assert (status, body["error"]["code"]) == (503, "draining")
        status, body = await status_of(session, "POST", f"{base}/games/{game_id}/seats", json={"name": "eve"})
        assert (status, body["error"]["code"]) == (503, "draining")
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(f"{base}/games/{game_id}/ws")
        assert refused.value.status == 503
        # The open sockets still play while the node drains: a command is acknowledged.
        mover = next(ws for ws, first in seats if first["view"].get("legal"))
        legal = next(first for ws, first in seats if ws is mover)["view"]["legal"]
        await mover.send_json({"type": "command", "id": uuid.uuid4().hex[:12], "command": legal[0]})
        await frames_until(mover, lambda f: f["type"] == "ack", within=5)
        assert time.monotonic() - stopped_at < DRAIN_MS / 1000, "the command came after the drain: nothing tested"

        closed = [await _closing(ws) for ws in (watcher, *(ws for ws, _ in seats))]
        assert {(code, reason) for code, reason in closed} == {(1001, "draining: reconnect")}
        assert proc.wait(timeout=20) == 0
    events = [line["event"] for line in log_lines(tmp_path / "node-0.log")]
    assert "serve.draining" in events and "serve.duty_released" in events
    problems = [line for line in log_lines(tmp_path / "node-0.log") if line.get("level") in ("error", "critical")]
    assert problems == [] and not any("Traceback" in str(line) for line in log_lines(tmp_path / "node-0.log"))
    await check_log(nodes.url, game_id)


async def _until_draining(session: aiohttp.ClientSession, base: str) -> tuple[int, Any]:
    deadline = time.monotonic() + 1.0
    while True:
        status, body = await status_of(session, "GET", f"{base}/readyz")
        if status == 503 or time.monotonic() > deadline:
            return status, body
        await asyncio.sleep(0.02)


async def _closing(ws: aiohttp.ClientWebSocketResponse) -> tuple[int | None, str]:
    while True:
        message = await ws.receive(timeout=10)
        if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
            return ws.close_code, str(message.extra or "")


@pytest.mark.timeout(120)
async def test_a_draining_node_hands_its_bot_games_over_at_once(nodes: Nodes) -> None:
    async with aiohttp.ClientSession() as session:
        # A long takeover delay: a hand-over that waited for it would take 20 s.
        driver, base_a = await nodes.start(session, bot_delay_ms=200, bot_sweep_ms=200, bot_takeover_ms=20_000,
                                           drain_ms=0)
        _, base_b = await nodes.start(session, bot_sweep_ms=200, bot_takeover_ms=20_000)
        body = {"game": "tiny", "seats": 2, "bots": {"0": "random", "1": "random"}, "bots_only": True,
                "options": {"target": 20}}
        game_id = (await post(session, f"{base_a}/games", body))["id"]
        watcher = await spectate(session, base_b, game_id)
        seen = await frames_until(watcher, lambda f: f.get("version", 0) >= 6, within=20)
        terminate(driver)
        assert driver.wait(timeout=20) == 0
        stopped_at, version_then = time.monotonic(), seen["version"]
        await frames_until(watcher, lambda f: f.get("version", 0) > version_then + 2, within=10)
        assert time.monotonic() - stopped_at < 10, "the other node waited for the takeover delay"
        await watcher.close()
    await check_log(nodes.url, game_id)


class Reconnecting:
    """One seat that plays its first legal move whenever it may, against a list of nodes: when
    its socket closes, or a node refuses it, it goes to the next node and resends the command it
    had not seen acknowledged, with the same id. It records every error it is shown."""

    def __init__(self, session: aiohttp.ClientSession, bases: list[str], game_id: str, token: str) -> None:
        self.session, self.bases, self.game_id, self.token = session, bases, game_id, token
        self.errors: list[Any] = []
        self.reconnects = 0
        self.acked: set[str] = set()
        self.finished = False
        self._at = random.randrange(len(bases))

    async def play(self, until: float) -> None:
        pending: dict[str, Any] | None = None
        while time.monotonic() < until and not self.finished:
            try:
                ws = await self.session.ws_connect(f"{self.bases[self._at]}/games/{self.game_id}/ws")
            except (aiohttp.ClientError, OSError):
                self._next()
                await asyncio.sleep(0.05)
                continue
            try:
                pending = await self._play_on(ws, pending, until)
            finally:
                await ws.close()

    async def _play_on(self, ws: Any, pending: dict[str, Any] | None, until: float) -> dict[str, Any] | None:
        await ws.send_json({"type": "hello", "token": self.token})
        if pending is not None:
            await ws.send_json(pending)
        while time.monotonic() < until:
            try:
                message = await ws.receive(timeout=max(0.01, until - time.monotonic()))
            except TimeoutError:
                return pending
            if message.type != aiohttp.WSMsgType.TEXT:  # closed: a drain, a restart
                self.reconnects += 1
                self._next()
                return pending
            frame = json.loads(message.data)
            if frame["type"] == "error":
                self.errors.append(frame)
            elif frame["type"] == "ack":
                self.acked.add(frame["id"])
                pending = None
            elif frame["type"] in ("snapshot", "update"):
                self.finished = frame["status"] == "finished"
                legal = frame["view"].get("legal")
                if pending is None and legal and not self.finished:
                    pending = {"type": "command", "id": uuid.uuid4().hex[:12], "command": legal[0]}
                    await ws.send_json(pending)
        return pending

    def _next(self) -> None:
        self._at = (self._at + 1) % len(self.bases)


async def with_any_node(bases: list[str], call: Any) -> Any:
    """``call(base)`` on the first node that takes it: one that drains (503) or is down is a
    reason to try the next, as a client behind a load balancer would."""
    for attempt in range(200):
        base = bases[attempt % len(bases)]
        try:
            return await call(base)
        except (aiohttp.ClientError, OSError, AssertionError):
            await asyncio.sleep(0.05)
    raise AssertionError("no node took the request in 200 attempts")


async def play_games_until(session: aiohttp.ClientSession, bases: list[str], until: float) -> tuple[list[str], list]:
    """Two seats playing tiny games back to back, each game made on whichever node takes it."""
    games, seats = [], []
    while time.monotonic() < until:
        game_id, tokens = await with_any_node(bases, lambda base: new_tiny_game(session, base))
        games.append(game_id)
        pair = [Reconnecting(session, bases, game_id, token) for token in tokens]
        seats += pair
        await asyncio.gather(*(seat.play(until) for seat in pair))
    return games, seats


@pytest.mark.timeout(180)
async def test_a_rolling_restart_of_three_nodes_under_load_loses_nothing(nodes: Nodes) -> None:
    async with aiohttp.ClientSession() as session:
        started = [await nodes.start(session, drain_ms=500) for _ in range(3)]
        bases = [base for _, base in started]
        until = time.monotonic() + 25
        load = [asyncio.create_task(play_games_until(session, bases, until)) for _ in range(4)]
        for index, (proc, _) in enumerate(started):
            await asyncio.sleep(2.0)
            terminate(proc)
            assert await asyncio.to_thread(proc.wait, 20) == 0
            # The replacement takes the old one's place in the clients' list.
            _, bases[index] = await nodes.start(session, drain_ms=500)
        results = await asyncio.gather(*load)
    games = [game_id for played, _ in results for game_id in played]
    seats = [seat for _, played in results for seat in played]
    acked = set().union(*(seat.acked for seat in seats))
    assert sum(seat.reconnects for seat in seats) >= 3, "the restarts closed no socket: nothing tested"
    assert [seat.errors for seat in seats if seat.errors] == []
    for game_id in games:
        envelopes = await check_log(nodes.url, game_id)  # no gap, nothing doubled, replay agrees
        acked -= {e.command_id.split(":", 1)[1] for e in envelopes if e.command_id and ":" in e.command_id}
    assert acked == set(), f"acknowledged commands missing from the store: {sorted(acked)}"
