"""A live reshard and a master failover under play, on a local cluster of three masters with a
replica each and two real ``donjon serve`` nodes: every game plays to its end with no gap and no
command twice, and the nodes log no error: every store trouble they met was translated into the
documented ``StoreUnavailable`` (a warning, retried), never a traceback of redis-py's own."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from events.errors import StoreUnavailable
from events.localcluster import LocalCluster
from events.store import EventStore
from tests.service.nodes import Nodes, check_log, connect, post
from tests.service.test_cluster import Resharder, slot_of

GAMES = 6


@pytest.fixture
def replicated(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster(tmp_path / "cluster", masters=3, replicas=1, node_timeout_ms=1000).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def problems(log: Path) -> list[dict[str, Any]]:
    """Error lines, and any line carrying a traceback, of one node's log."""
    found = []
    for line in log.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            if "Traceback" in line:
                found.append({"line": line})
            continue
        if record.get("level") in ("error", "critical") or "exception" in record:
            found.append(record)
    return found


async def connect_after_failover(url: str, within: float) -> EventStore:
    """A store on the cluster once it answers again: until the replica is promoted, the cluster's
    map still names the dead master, and a client that reaches for it is refused."""
    deadline = time.monotonic() + within
    while True:
        try:
            return await connect(url)
        except StoreUnavailable:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


async def finished(url: str, game_ids: list[str], within: float) -> set[str]:
    deadline = time.monotonic() + within
    store = await connect_after_failover(url, within)
    done: set[str] = set()
    try:
        while done != set(game_ids) and time.monotonic() < deadline:
            for game_id in set(game_ids) - done:
                try:
                    last = (await store.read(game_id, await store.version(game_id)))[-1]
                except Exception:  # the store fails over: look again
                    continue
                if last.type == "game.finished":
                    done.add(game_id)
            await asyncio.sleep(0.2)
    finally:
        await store.close()
    return done


@pytest.mark.timeout(240)
async def test_a_reshard_and_a_failover_under_play_leave_no_untranslated_error(
    replicated: LocalCluster, tmp_path: Path
) -> None:
    nodes = Nodes(replicated.url, tmp_path)
    body = {"game": "tiny", "seats": 2, "bots": {"0": "random", "1": "random"}, "bots_only": True,
            "options": {"target": 20}}
    try:
        async with aiohttp.ClientSession() as session:
            _, base_a = await nodes.start(session, bot_delay_ms=150, bot_sweep_ms=300)
            await nodes.start(session, bot_delay_ms=150, bot_sweep_ms=300)
            game_ids = [(await post(session, f"{base_a}/games", body))["id"] for _ in range(GAMES)]
            resharder = Resharder(replicated)
            try:
                for game_id in game_ids[:2]:
                    await resharder.move(slot_of(game_id))
            finally:
                await resharder.close()
            victim = replicated.master_of_slot(slot_of(game_ids[-1]))
            victim.process.kill()
            victim.process.wait()
            # The seed may have been the victim: read through a node still up.
            live = next(node for node in replicated.masters + replicated.replicas if node.process.poll() is None)
            url = f"redis://{live.address}/0"
            done = await finished(url, game_ids, within=120)
        assert done == set(game_ids), f"not finished: {set(game_ids) - done}"
    finally:
        nodes.stop_all()
    for game_id in game_ids:
        await check_log(url, game_id)
    logs = sorted(tmp_path.glob("node-*.log"))
    assert logs and {log.name: problems(log) for log in logs} == {log.name: [] for log in logs}
