"""A rematch neither breaks the game it follows nor itself (issue 21, item 6): the finished game's
export still works once ``game.rematch`` follows ``game.finished`` (it covers the stream up to the
end and names the rematch), and the rematch's seed is stored like any game's, so a real
``donjon serve`` restarted on the same data folder serves the rematch and its export verifies."""

from __future__ import annotations

import base64
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import msgpack
import pytest

from bench.processes import wait_ready
from service.fairness.signing import NodeKey
from service.fairness.verify import verify_export
from tests.service.conftest import TEST_SIGNING_KEY
from tests.service.test_crash_recovery import free_port, group_gone, new_started_game, start_service
from tests.tinygame import TINY

ENGINES = {"tiny": TINY}
PUBLIC_KEY = NodeKey(bytes.fromhex(TEST_SIGNING_KEY)).public_hex


async def resign(session: aiohttp.ClientSession, base: str, game_id: str, token: str) -> None:
    """The seat of ``token`` resigns, which ends a two-seat game."""
    async with session.ws_connect(f"{base}/games/{game_id}/ws") as ws:
        await ws.send_json({"type": "hello", "token": token})
        await ws.receive_json(timeout=5)
        await ws.send_json({"type": "command", "id": "bye", "command": {"type": "resign", "args": {}}})
        while True:
            frame = await ws.receive_json(timeout=5)
            if frame["type"] in ("ack", "error") and frame.get("id") == "bye":
                assert frame["type"] == "ack", frame
                return


async def verified_export(session: aiohttp.ClientSession, base: str, game_id: str) -> dict[str, Any]:
    async with session.get(f"{base}/games/{game_id}/export") as response:
        assert response.status == 200, await response.text()
        export = await response.json()
    report = verify_export(export, ENGINES, key=PUBLIC_KEY)
    assert report.ok, report.problems
    return export


async def rematch_of(session: aiohttp.ClientSession, base: str, game_id: str, tokens: list[str]) -> str:
    ids = set()
    for token in tokens:
        async with session.post(f"{base}/games/{game_id}/rematch", headers={"Authorization": f"Bearer {token}"}) as r:
            assert r.status == 201, await r.text()
            ids.add((await r.json())["id"])
    (rematch_id,) = ids
    return rematch_id


def stop(service: Any) -> None:
    os.killpg(service.pid, signal.SIGTERM)
    service.wait(30)
    assert group_gone(service.pid)


@contextlib.asynccontextmanager
async def serving(data_dir: Path, log: Path) -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    """A real ``donjon serve`` on ``data_dir``, ready, with a session to it; stopped at the end."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    service = start_service(data_dir, port, log)
    try:
        async with aiohttp.ClientSession() as session:
            await wait_ready(session, base)
            yield session, base
    finally:
        stop(service)


@pytest.mark.timeout(120)
async def test_a_finished_game_exports_after_its_rematch_and_the_rematch_survives_a_restart(tmp_path: Path):
    data_dir, log = tmp_path / "data", tmp_path / "serve.log"
    async with serving(data_dir, log) as (session, base):
        game_id, tokens = await new_started_game(session, base)
        await resign(session, base, game_id, tokens[0])
        before = await verified_export(session, base, game_id)
        assert "rematch" not in before
        rematch_id = await rematch_of(session, base, game_id, tokens)
        after = await verified_export(session, base, game_id)
        assert after["rematch"] == rematch_id
        assert after["events"] == before["events"] and after["chain"] == before["chain"]

    async with serving(data_dir, log) as (session, base):
        async with session.get(f"{base}/games/{rematch_id}") as response:
            assert response.status == 200, await response.text()
            state = await response.json()
        assert state["status"] == "open", state
        new_tokens = []
        for token in reversed(tokens):  # the old seat 1 sits at 0 now
            async with session.post(
                f"{base}/games/{rematch_id}/seats", headers={"Authorization": f"Bearer {token}"}
            ) as response:
                assert response.status == 200, await response.text()
                new_tokens.append((await response.json())["token"])
        await resign(session, base, rematch_id, new_tokens[1])
        export = await verified_export(session, base, rematch_id)
        assert export["id"] == rematch_id and "rematch" not in export
        created = msgpack.unpackb(base64.b64decode(export["events"][0]["body"]), raw=False)
        assert created["payload"]["rematch_of"] == game_id
        assert (await verified_export(session, base, game_id))["rematch"] == rematch_id
