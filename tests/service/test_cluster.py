"""donjon on a real 3-master Valkey Cluster (the session's ``cluster`` fixture, tests/conftest.py).

Games spread over every master are played to the end through three nodes with spectators on
the others; the slots of games in play are moved between masters (``CLUSTER SETSLOT`` +
``MIGRATE``, as ``redis-cli --cluster reshard`` does) with no update lost or doubled; a node
watching 2,000 games holds a fixed handful of store connections; ``/readyz`` fails while the
node's reader fails. (The store's contract and the two-node flows run on the cluster too, through
the parametrized ``store`` / ``make_node`` fixtures.)
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import uuid
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from events.due import due_key, shard_of
from events.localcluster import LocalCluster
from events.store import events_key, lobby_key, lobby_shard
from service.edge.keys import NODE, SERVICE, SETTINGS, STORE
from service.run.app import create_app
from tests.service.conftest import (
    ENGINES,
    command,
    create_tiny,
    expect_reply,
    hello,
    receive_until,
    settings_for,
    started_tiny,
    take_seat,
)
from tests.service.players import Player, play_all

pytestmark = pytest.mark.timeout(120)


def versions_of(frames: list[dict[str, Any]]) -> list[int]:
    return [event["version"] for frame in frames if frame["type"] == "update" for event in frame["events"]]


def slot_of(game_id: str) -> int:
    return key_slot(events_key(game_id).encode())


@pytest.fixture
async def cluster_nodes(aiohttp_client: Any, cluster: LocalCluster):
    """``nodes(n, **settings)``: n service nodes on the cluster, each with its own name."""

    async def nodes(count: int, **overrides: Any) -> list[Any]:
        made = []
        for _ in range(count):
            settings = settings_for(cluster.url, node_id=f"t{uuid.uuid4().hex[:8]}", **overrides)
            made.append(await aiohttp_client(create_app(settings, engines=ENGINES)))
        return made

    return nodes


async def played_with_spectators(
    nodes: list[Any], game_ids: list[str], tokens: dict[str, list[str]]
) -> list[Player]:
    """Every game played to the end by seats on two nodes, watched from the third; each spectator
    sees every version from 7 on exactly once, in order, and no command is answered ``internal``
    (the game-ending one included)."""
    spectators, players = {}, []
    for index, game_id in enumerate(game_ids):
        home, other, watcher = (nodes[(index + k) % len(nodes)] for k in range(3))
        spectators[game_id], _ = await hello(watcher, game_id)
        for seat, node in enumerate((home, other)):
            ws, first = await hello(node, game_id, tokens[game_id][seat])
            players.append(Player(ws, first, random.Random(index * 10 + seat), f"{game_id}-{seat}"))
    await play_all(players, timeout=10.0)
    for game_id, spectator in spectators.items():
        final, seen = await receive_until(spectator, lambda f: f["status"] == "finished", timeout=10.0)
        assert versions_of(seen) == list(range(7, final["version"] + 1)), game_id  # all, once, in order
    for game_id in game_ids:
        await nodes[0].app[STORE].verify_chain(game_id)
    assert not [frame for player in players for frame in player.refused if frame["code"] == "internal"]
    return players


async def test_games_on_every_master_are_played_to_the_end_with_spectators_on_other_nodes(cluster_nodes, cluster):
    nodes = await cluster_nodes(3)
    game_ids: list[str] = []
    tokens: dict[str, list[str]] = {}
    masters: set[int] = set()
    while len(masters) < 3 or len(game_ids) < 6:
        assert len(game_ids) < 60, "60 games and still not on every master"
        game_id, game_tokens = await started_tiny(nodes[len(game_ids) % 3])
        game_ids.append(game_id)
        tokens[game_id] = game_tokens
        masters.add(cluster.master_of_slot(slot_of(game_id)).port)
    players = await played_with_spectators(nodes, game_ids, tokens)
    assert [player.refused for player in players] == [[] for _ in players]  # turns alternate: nothing refused
    for node in nodes:  # the lobby of every node lists each finished game once
        listed = (await (await node.get("/games?status=finished&limit=200")).json())["games"]
        ids = [entry["id"] for entry in listed]
        assert all(ids.count(game_id) == 1 for game_id in game_ids)
        active = (await (await node.get("/games?status=active&limit=200")).json())["games"]
        assert not {entry["id"] for entry in active} & set(game_ids)


class Resharder:
    """Moves slots between the masters while a game is played, as ``redis-cli --cluster
    reshard`` does: IMPORTING on the target, MIGRATING on the source, MIGRATE of every key of
    the slot, then the new owner announced to every master."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.clients = {m.port: aioredis.Redis(host="127.0.0.1", port=m.port) for m in cluster.masters}
        self.moves = 0
        self.placed: dict[int, int] = {}
        """The master each slot was last moved to (port)."""

    async def node_id(self, port: int) -> str:
        return (await self.clients[port].execute_command("CLUSTER", "MYID")).decode()

    async def owner(self, slot: int, wait: float = 20.0) -> int:
        """The master that says it serves ``slot`` (its own view, right after a move; the others
        learn of it over the cluster bus a moment later). Under load a master's view may lag a
        moment behind its own SETSLOT, so this asks again for up to ``wait`` seconds; and when
        the bus left no master claiming the slot after a move (the new owner took a gossip of
        the old one's for newer), the move's last step is sent to the new owner again each
        second, as ``redis-cli --cluster fix`` would."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        next_nudge = loop.time() + 1.0
        while True:
            for port, client in self.clients.items():
                for start, end, primary, *_replicas in await client.execute_command("CLUSTER", "SLOTS"):
                    if start <= slot <= end and int(primary[1]) == port:
                        return port
            if loop.time() >= deadline:
                raise LookupError(f"no master says it serves slot {slot}")
            if slot in self.placed and loop.time() >= next_nudge:
                target = self.placed[slot]
                await self.clients[target].execute_command("CLUSTER", "SETSLOT", slot, "NODE", await self.node_id(target))
                next_nudge = loop.time() + 1.0
            await asyncio.sleep(0.05)

    async def move(self, slot: int) -> None:
        source, target = await self.begin(slot)
        await self.finish(slot, source, target)

    async def begin(self, slot: int) -> tuple[int, int]:
        """The slot marked IMPORTING on the next master and MIGRATING on its owner, no key moved
        yet; ``(source, target)`` ports."""
        source = await self.owner(slot)
        ports = sorted(self.clients)
        target = ports[(ports.index(source) + 1) % len(ports)]
        source_id, target_id = await self.node_id(source), await self.node_id(target)
        await self.clients[target].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
        await self.clients[source].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
        return source, target

    async def finish(self, slot: int, source: int, target: int) -> None:
        """Every key of the slot migrated, then the new owner announced to every master."""
        target_id = await self.node_id(target)
        while keys := await self.clients[source].execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
            await self.clients[source].execute_command("MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *keys)
        ports = sorted(self.clients)
        for port in (target, source, *[p for p in ports if p not in (source, target)]):
            await self.clients[port].execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
        self.placed[slot] = target
        self.moves += 1

    async def keep_moving(self, slots: list[int], until: asyncio.Event) -> None:
        while not until.is_set():
            for slot in slots:
                await self.move(slot)
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        for client in self.clients.values():
            await client.aclose()


async def test_a_live_reshard_of_the_games_slots_during_play_loses_and_doubles_no_update(cluster_nodes, cluster):
    nodes = await cluster_nodes(3)
    game_ids, tokens = [], {}
    for index in range(3):
        game_id, game_tokens = await started_tiny(nodes[index], target=20)  # the longest tiny games
        game_ids.append(game_id)
        tokens[game_id] = game_tokens
    resharder = Resharder(cluster)
    done = asyncio.Event()
    moving = asyncio.create_task(resharder.keep_moving([slot_of(g) for g in game_ids], done))
    try:
        players = await played_with_spectators(nodes, game_ids, tokens)
    finally:
        done.set()
        await moving
        await resharder.close()
    assert resharder.moves >= 6  # every game's slot moved at least twice while it was played
    # Commands followed the moving slots (MOVED, ASK, TRYAGAIN): none was refused, not even
    # as store_unavailable.
    assert [player.refused for player in players] == [[] for _ in players]
    # The nodes' feeds followed the slots (not only the slow poll): each watched game is
    # subscribed on the master that serves it now.
    assert sum(node.app[NODE].feed.moved for node in nodes) > 0

    def followed() -> bool:
        return all(
            node.app[NODE].feed.subscribed_on(game_id) == cluster.master_of_slot(slot_of(game_id)).address
            for node in nodes
            for game_id in game_ids
        )

    await settle(followed, timeout=10.0)
    for game_id in game_ids:  # and the lobby followed the games across the moves
        body = await (await nodes[1].get(f"/games/{game_id}")).json()
        assert body["status"] == "finished"
        listed = (await (await nodes[2].get("/games?status=finished&limit=200")).json())["games"]
        assert game_id in [entry["id"] for entry in listed]


async def test_games_with_no_command_yet_take_commands_while_their_slots_are_migrating(cluster_nodes, cluster):
    """Before any command a game's command-id hash must exist already: in a migrating slot a
    script whose keys exist only in part is answered TRYAGAIN until the move completes."""
    node, other = await cluster_nodes(2)
    open_id = await create_tiny(node)  # no seat taken yet
    started_id, tokens = await started_tiny(node)  # seats taken without request ids: no command id yet
    resharder = Resharder(cluster)
    moving = {slot_of(game_id): await resharder.begin(slot_of(game_id)) for game_id in (open_id, started_id)}
    try:
        seat = await other.post(f"/games/{open_id}/seats", json={"name": "cy", "request_id": uuid.uuid4().hex})
        assert seat.status == 200, await seat.text()  # not store_unavailable after TRYAGAIN retries
        spectator, _ = await hello(other, started_id)
        player, _ = await hello(node, started_id, tokens[0])
        await command(player, "first", {"type": "draw", "args": {}})
        reply, _ = await expect_reply(player, "first")
        assert reply["type"] == "ack", reply
        update, _ = await receive_until(spectator, lambda f: f["type"] == "update")
        assert update["version"] == reply["version"]
        await player.close()
        await spectator.close()
    finally:
        for slot, (source, target) in moving.items():
            await resharder.finish(slot, source, target)
        await resharder.close()
    for game_id in (open_id, started_id):
        await node.app[STORE].verify_chain(game_id)


class Watcher:
    """A subscriber of one game on a node (what a socket is to the node's hub)."""

    def __init__(self) -> None:
        self.viewer = None
        from service.edge.outbox import FRAMED

        self.codec = FRAMED["json"]
        self.frames = 0

    def deliver(self, data: str | bytes) -> None:
        self.frames += 1


async def store_connections(cluster: LocalCluster, name: str) -> dict[int, int]:
    """Connections named ``name`` on each master (``CLIENT LIST``)."""
    counts = {}
    for master in cluster.masters:
        client = aioredis.Redis(host="127.0.0.1", port=master.port)
        try:
            listing = (await client.execute_command("CLIENT", "LIST")).decode()
        finally:
            await client.aclose()
        counts[master.port] = sum(1 for line in listing.splitlines() if f" name={name} " in f" {line} ")
    return counts


async def watched(node: Any, game_ids: list[str]) -> list[Watcher]:
    live_node = node.app[NODE]
    watchers = []
    for game_id in game_ids:
        watcher = Watcher()
        live_node.subscribe(await live_node.live_game(game_id), watcher)
        watchers.append(watcher)
    return watchers


async def settle(condition: Any, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_a_node_watching_thousands_of_games_holds_a_bounded_number_of_store_connections(cluster_nodes, cluster):
    node, creator = await cluster_nodes(2)  # the games are made elsewhere: this node only watches
    name = f"donjon-{node.app[SETTINGS].node_id}"
    service = creator.app[SERVICE]

    async def created(count: int) -> list[str]:
        ids: list[str] = []
        for start in range(0, count, 200):
            made = await asyncio.gather(*(service.create_game("tiny", {}, 2) for _ in range(min(200, count - start))))
            ids += [projection.game_id for projection in made]
        return ids

    few = await created(10)
    watchers = await watched(node, few)
    await settle(lambda: node.app[NODE].feed.problem is None and node.app[NODE].feed.notices >= 10)
    at_ten = await store_connections(cluster, name)
    many = await created(1990)
    watchers += await watched(node, many)
    await settle(lambda: node.app[NODE].feed.notices >= 2000)
    at_two_thousand = await store_connections(cluster, name)
    assert node.app[NODE].feed.connections == 3  # one subscriber connection per master
    assert max(at_two_thousand.values()) <= 8, at_two_thousand
    assert sum(at_two_thousand.values()) <= sum(at_ten.values()) + 6, (at_ten, at_two_thousand)
    # and every one of those games is still pushed to at once (a notice, not the slow poll)
    everyone = few + many
    sample = random.Random(5).sample(range(len(everyone)), 30)
    before = [watchers[i].frames for i in sample]
    await asyncio.gather(*(take_seat(creator, everyone[i], "ann") for i in sample))
    await settle(lambda: all(watchers[i].frames > b for i, b in zip(sample, before, strict=True)), timeout=5.0)


@pytest.mark.allow_error_logs
async def test_readyz_fails_while_the_nodes_reader_fails_and_recovers_after(cluster_nodes, cluster):
    (node,) = await cluster_nodes(1, read_block_ms=100)
    game_id, _ = await started_tiny(node)
    watcher, _ = await hello(node, game_id)
    assert (await node.get("/readyz")).status == 200
    redis = node.app[STORE].redis
    await redis.xadd(events_key(game_id), {"b": b"\xc1"}, id="7-0")  # an entry no reader can decode
    await settle(lambda: node.app[NODE].problem is not None, timeout=5.0)
    response = await node.get("/readyz")
    body = await response.json()
    assert response.status == 503
    assert body["error"]["code"] == "store_unavailable" and "reader" in body["error"]["message"]
    await redis.xdel(events_key(game_id), "7-0")
    await settle(lambda: node.app[NODE].problem is None, timeout=5.0)
    assert (await node.get("/readyz")).status == 200
    await watcher.close()


async def test_donjon_replay_checks_a_game_played_on_the_cluster(cluster_nodes, cluster, monkeypatch, capsys):
    from service.run.cli import main

    (node,) = await cluster_nodes(1)
    game_id, tokens = await started_tiny(node)
    await played_with_spectators([node, node, node], [game_id], {game_id: tokens})
    monkeypatch.setenv("DONJON_REDIS_URL", cluster.url)  # DONJON_REDIS_CLUSTER=auto finds the cluster
    assert await asyncio.to_thread(main, ["replay", game_id], ENGINES) == 0
    assert "OK:" in capsys.readouterr().out


async def test_the_reader_lives_on_when_its_last_game_is_left_while_it_waits(cluster_nodes):
    (node,) = await cluster_nodes(1, read_block_ms=50)
    first, _ = await started_tiny(node)
    watcher, _ = await hello(node, first)
    await watcher.close()  # the node watches nothing now, maybe while its reader waits for a poll
    await asyncio.sleep(0.2)
    assert node.app[NODE].problem is None
    second, tokens = await started_tiny(node)
    spectator, _ = await hello(node, second)
    player, _ = await hello(node, second, tokens[0])
    await player.send_json({"type": "command", "id": "c1", "command": {"type": "draw", "args": {}}})
    update, _ = await receive_until(spectator, lambda f: f["type"] == "update")
    assert update["version"] == 7


async def test_the_feed_metrics_count_notices_gap_reads_polls_and_reconnects(cluster_nodes):
    from tests.events.test_cluster_store import kill_subscriber_connections

    (node,) = await cluster_nodes(1, read_block_ms=100)
    metrics = node.app[NODE].metrics
    game_id, tokens = await started_tiny(node)
    spectator, _ = await hello(node, game_id)
    player, _ = await hello(node, game_id, tokens[0])
    await settle(lambda: metrics.feed_gap_reads.value() >= 1)  # the first subscription: read, not carried
    await settle(lambda: node.app[NODE].feed.subscribed_on(game_id) is not None)
    notices = metrics.feed_notices.value()
    await command(player, "c1", {"type": "draw", "args": {}})
    await receive_until(spectator, lambda f: f["type"] == "update")
    await settle(lambda: metrics.feed_notices.value() > notices)
    await settle(lambda: metrics.feed_polls.value() >= 2, timeout=5.0)
    assert metrics.feed_reconnects.value() == 0
    assert await kill_subscriber_connections(node.app[STORE], f"donjon-{node.app[SETTINGS].node_id}") >= 1
    await settle(lambda: metrics.feed_reconnects.value() >= 1, timeout=5.0)
    text = await (await node.get("/metrics")).text()
    for name in ("notices", "gap_reads", "polls", "reconnects"):
        assert f"donjon_feed_{name}_total{{" in text
    await player.close()
    await spectator.close()


def master_of_key(cluster: LocalCluster, key: str) -> Any:
    return cluster.master_of_slot(key_slot(key.encode()))


async def game_apart_from_its_finished_lobby_shard(node: Any, cluster: LocalCluster) -> tuple[str, list[str], Any]:
    """A started tiny game (target 1: the first card played ends it) whose finished-lobby shard
    lives on a master that holds neither the game nor its due-bots listing; that master too."""
    for _ in range(40):
        game_id, tokens = await started_tiny(node, target=1)
        shard_master = master_of_key(cluster, lobby_key("finished", lobby_shard(game_id)))
        others = {master_of_key(cluster, events_key(game_id)).port, master_of_key(cluster, due_key(shard_of(game_id))).port}
        if shard_master.port not in others:
            return game_id, tokens, shard_master
    raise AssertionError("40 games and none apart from its finished-lobby shard")


async def listed(store: Any, game_id: str, status: str) -> bool:
    return game_id in await store.list_games(status, limit=1000)


@pytest.mark.allow_error_logs
async def test_a_game_whose_lobby_write_failed_after_its_last_move_is_listed_finished_by_the_sweep(
    cluster_nodes, cluster
):
    (node,) = await cluster_nodes(1, store_timeout_ms=500, bot_sweep_ms=200, bot_takeover_ms=300)
    store = node.app[STORE]
    game_id, tokens, stalled = await game_apart_from_its_finished_lobby_shard(node, cluster)
    player, first = await hello(node, game_id, tokens[0])
    ending = next(c for c in first["view"]["legal"] if c["type"] == "play")
    os.kill(stalled.process.pid, signal.SIGSTOP)  # the master of the finished shard stops answering
    try:
        await command(player, "last", ending)
        reply, _ = await expect_reply(player, "last")
    finally:
        os.kill(stalled.process.pid, signal.SIGCONT)
    assert (reply["type"], reply.get("code")) == ("error", "store_unavailable"), reply
    assert (await store.read(game_id))[-1].type == "game.finished"  # the move was appended
    assert await listed(store, game_id, "active"), "the lobby write did not fail; nothing was tested"
    deadline = asyncio.get_running_loop().time() + 10
    while not await listed(store, game_id, "finished") or await listed(store, game_id, "active"):
        assert asyncio.get_running_loop().time() < deadline, "the sweep did not repair the lobby"
        await asyncio.sleep(0.1)
    entries = (await (await node.get("/games?status=finished&limit=50")).json())["games"]
    assert game_id in [entry["id"] for entry in entries]
    await player.close()
