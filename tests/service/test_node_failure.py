"""Node failure with real processes: two or more ``donjon serve`` nodes on one Valkey server the
test starts itself, and again on the session's 3-master cluster, nodes killed with SIGKILL, and
what the live nodes or a restart do about it (the processes: tests/service/nodes.py).

* The node driving a bot-only game dies; another node that watches the game (a spectator socket)
  finishes it, its first move coming within the takeover time plus a margin.
* The driver dies right after a human's move that followed a bot's turn: the watching node makes
  the bot's move, and the human finishes the game there.
* Every node dies; a restarted node finds the bot games in the due-bots index and finishes them
  without any request.
* A seat request is retried on another node after the first node answered and died: the same
  seat and token; another request id takes another seat.
* On the cluster only: each of three nodes in turn is killed while it and another drive bot
  games of every game type, spectators of each on every node, a fresh node started after each
  kill; every game still ends.

The watching nodes run without the due-bots sweep (``DONJON_BOT_SWEEP_MS=0``) in the first two,
so only the takeover watch their stream reader re-arms can save the game.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from events.due import due_key, shard_of
from events.store import EventStore
from tests.service.nodes import (
    ENGINES,
    FIRST_MOVE_WITHIN,
    LAUNCH_EVERY_GAME,
    Nodes,
    check_log,
    connect,
    frames_until,
    human_seat,
    play_when_my_turn,
    post,
    spectate,
)


@pytest.fixture(params=["valkey", "cluster"])
def store_url(request: pytest.FixtureRequest) -> str:
    """Each test runs on a Valkey server of its own and on the session's 3-master cluster."""
    if request.param == "cluster":
        return request.getfixturevalue("cluster_redis_url")
    return request.getfixturevalue("valkey")


@pytest.fixture
async def nodes(store_url: str, tmp_path: Path) -> AsyncIterator[Nodes]:
    running = Nodes(store_url, tmp_path)
    try:
        yield running
    finally:
        running.stop_all()


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
        store = await connect(nodes.url)
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
        store = await connect(nodes.url)
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
            assert await _due_listings(store, games) == 0, "finished games must leave the due-bots index"
        finally:
            await store.close()
        async with session.get(f"{base}/metrics") as response:
            text = await response.text()
        counted = [line for line in text.splitlines() if line.startswith("donjon_http_requests_total{")]
        routes = {line.split('route="')[1].split('"')[0] for line in counted}
        assert routes == {"/readyz"}, f"requests other than readiness probes reached the node: {routes}"
    for game_id in games:
        await check_log(nodes.url, game_id)


async def _due_listings(store: EventStore, games: list[str]) -> int:
    """How many of ``games`` the due-bots index still lists, once the sweep had 10 s to unlist
    them (the session's cluster lists other tests' games too)."""

    async def count() -> int:
        return sum([await store.redis.zscore(due_key(shard_of(g)), g) is not None for g in games])

    for _ in range(50):
        if not await count():
            return 0
        await asyncio.sleep(0.2)
    return await count()


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


@pytest.fixture
async def every_game_nodes(cluster_redis_url: str, tmp_path: Path) -> AsyncIterator[Nodes]:
    """Nodes on the session's cluster that serve every game of the registry."""
    running = Nodes(cluster_redis_url, tmp_path, launch=LAUNCH_EVERY_GAME)
    try:
        yield running
    finally:
        running.stop_all()


async def bot_game(session: aiohttp.ClientSession, base: str, game: str, bots: list[str]) -> str:
    seats = max(2, ENGINES[game].min_seats)
    body = {"game": game, "seats": seats, "bots_only": True, "bots": {str(seat): bots[0] for seat in range(seats)}}
    return (await post(session, f"{base}/games", body))["id"]


async def _kill_a_driver_and_see_every_game_end(
    session: aiohttp.ClientSession,
    nodes: Nodes,
    live: list[tuple[subprocess.Popen[bytes], str]],
    victim: int,
    survivor: int,
) -> list[str]:
    """Bot games of every game type driven by ``live[victim]`` and ``live[survivor]``, spectators
    of each on every live node; ``live[victim]`` is killed once its games are under way, and
    every game must end on the other nodes' spectators. The game ids."""
    catalog = (await (await session.get(f"{live[survivor][1]}/games/catalog")).json())["games"]
    bots = {entry["id"]: entry["bots"] for entry in catalog}
    games: dict[str, int] = {}  # game id -> the index of the node that created (drives) it
    for driver in (victim, survivor):
        for game in sorted(ENGINES):
            games[await bot_game(session, live[driver][1], game, bots[game])] = driver
    watching = {
        (game_id, index): await spectate(session, base, game_id)
        for game_id in games
        for index, (_, base) in enumerate(live)
    }
    await asyncio.sleep(1.5)
    store = await connect(nodes.url)
    try:
        active = [g for g, d in games.items() if d == victim and (await store.read(g))[-1].type != "game.finished"]
    finally:
        await store.close()
    assert active, "every game of the node to kill ended before the kill; nothing was tested"
    nodes.kill(live[victim][0])
    for (game_id, index), ws in watching.items():
        if index != victim:
            frame = await frames_until(ws, lambda f: f.get("status") == "finished", within=150)
            assert frame["status"] == "finished", game_id
    for ws in watching.values():
        await ws.close()
    return list(games)


@pytest.mark.timeout(480)
async def test_on_the_cluster_killing_each_of_three_nodes_in_turn_stalls_no_game(every_game_nodes: Nodes) -> None:
    """Three nodes on the 3-master cluster, each killed in turn while it drives bot games of every
    game type, a fresh node started after each kill (as an orchestrator would): every game of
    every round ends, and each game's log re-runs exactly."""
    nodes = every_game_nodes
    games: list[str] = []
    async with aiohttp.ClientSession() as session:
        live = [await nodes.start(session, bot_delay_ms=40) for _ in range(3)]
        for round_ in range(3):  # the oldest node dies each round: after three, none of the first is left
            games += await _kill_a_driver_and_see_every_game_end(session, nodes, live, victim=0, survivor=1)
            live = live[1:] + ([await nodes.start(session, bot_delay_ms=40)] if round_ < 2 else [])
    for game_id in games:
        envelopes = await check_log(nodes.url, game_id)
        assert envelopes[-1].type == "game.finished"
