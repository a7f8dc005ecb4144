"""The store on a real 3-master cluster beyond the shared contract: detection, errors by their
real names, one slot per command, and the append notices a node's feed follows."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis.exceptions as rexc
from redis.crc import key_slot

from events.envelope import NewEvent
from events.errors import StoreUnavailable
from events.server import translated as translate
from events.store import EventStore, detect_cluster, events_key, lobby_keys

TS = 1_700_000_000_000


async def test_a_cluster_is_detected_and_one_server_is_not(cluster_redis_url, embedded_redis_url) -> None:
    assert await detect_cluster(cluster_redis_url) is True
    assert await detect_cluster(embedded_redis_url) is False
    store = await EventStore.connect(cluster_redis_url, cluster=None)
    try:
        assert store.cluster
        await store.ping()
    finally:
        await store.close()


async def test_a_plain_client_on_a_cluster_fails_as_unavailable_naming_the_redirection(cluster, new_game_id) -> None:
    store = await EventStore.connect(cluster.url, cluster=False)  # DONJON_REDIS_CLUSTER=no on a cluster
    first = cluster.masters[0]
    try:
        for _ in range(200):  # a game whose slot another master serves
            game = new_game_id()
            if cluster.master_of_slot(key_slot(events_key(game).encode())).port != first.port:
                break
        with pytest.raises(StoreUnavailable, match="MovedError"):
            await store.append(game, [NewEvent("a", {})], expected_version=0, command_id=None, actor=None, ts=TS)
    finally:
        await store.close()


def test_cluster_exceptions_that_are_not_redis_errors_become_store_unavailable() -> None:
    for exc in (
        rexc.RedisClusterException("Cluster mode is not enabled on this node"),
        rexc.SlotNotCoveredError('Slot "7" is not covered by the cluster.'),
        rexc.ClusterDownError("CLUSTERDOWN The cluster is down"),
        rexc.TryAgainError("TRYAGAIN"),
        rexc.MovedError("7083 127.0.0.1:7001"),
    ):
        translated = translate(exc)
        assert isinstance(translated, StoreUnavailable), exc
        assert str(translated).startswith("event store unavailable: " + type(exc).__name__)
        assert translated.__cause__ is exc


async def test_the_lobby_shards_spread_over_the_masters(cluster) -> None:
    masters = {cluster.master_of_slot(key_slot(key.encode())).port for key in lobby_keys("active")[:-1]}
    assert len(masters) == 3


async def test_the_feed_announces_appends_with_their_events_on_every_master(store, new_game_id) -> None:
    games = [new_game_id() for _ in range(12)]
    if store.cluster:  # twelve random ids miss one of three masters about once in forty runs
        while len({store.redis.get_node_from_key(events_key(game)).name for game in games}) < 3:
            games.append(new_game_id())
    feed = store.feed()
    try:
        feed.watch(games)
        assert await feed.next(5.0) == {game: [] for game in games}  # new games are due at once: read them
        deadline = asyncio.get_running_loop().time() + 5
        while feed.notices < len(games):  # every subscription confirmed
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.01)
        await feed.next(0.01)
        await store.append(games[3], [NewEvent("a", {"k": 1}), NewEvent("b", {})], expected_version=0,
                           command_id="c1", actor=1, ts=TS)
        announced = await feed.next(5.0)
        assert list(announced) == [games[3]]
        assert announced[games[3]] == await store.read(games[3])  # the notice carried the entries as stored
        assert feed.problem is None
        assert feed.connections == (3 if store.cluster else 1)
        feed.watch(games[:2])
        await store.append(games[3], [NewEvent("c", {})], expected_version=2, command_id=None, actor=None, ts=TS)
        assert await feed.next(0.3) is None  # no longer watched: no notice, only the poll's timeout
    finally:
        await feed.close()


async def test_a_notice_too_large_to_carry_its_events_only_announces_the_game(store, new_game_id) -> None:
    game = new_game_id()
    feed = store.feed()
    try:
        feed.watch([game])
        await feed.next(5.0)
        deadline = asyncio.get_running_loop().time() + 5
        while feed.notices < 1:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.01)
        big = [NewEvent("big", {"blob": "x" * 30_000}) for _ in range(3)]  # 90 KB: above the 64 KiB carried
        await store.append(game, big, expected_version=0, command_id=None, actor=None, ts=TS)
        assert await feed.next(5.0) == {game: []}
        assert store.decode_notice(game, b"\x92\x01") == [] and store.decode_notice(game, b"\xc1") == []
    finally:
        await feed.close()


async def test_a_killed_subscriber_connection_is_made_again_and_its_games_read_at_once(redis_url, new_game_id) -> None:
    name = f"feed-{uuid.uuid4().hex[:8]}"
    store = await EventStore.connect(redis_url, cluster=None, client_name=name)
    games = [new_game_id() for _ in range(6)]
    feed = store.feed()
    try:
        feed.watch(games)
        await feed.next(5.0)
        await until(lambda: feed.notices >= len(games))
        await feed.next(0.01)
        killed = await kill_subscriber_connections(store, name)
        assert killed >= 1
        lost = await feed.next(5.0)
        assert lost is not None and set(lost) <= set(games)  # the games of the lost connection: read them
        await until(lambda: all(feed.subscribed_on(game) for game in games) and feed.problem is None)
        await feed.next(0.01)
        await store.append(games[0], [NewEvent("a", {})], expected_version=0, command_id=None, actor=None, ts=TS)
        announced = await feed.next(5.0)
        assert [e.version for e in announced[games[0]]] == [1]  # notices flow again on the new connection
    finally:
        await feed.close()
        for game in games:
            await store.redis.delete(events_key(game))
        await store.close()


async def until(condition, limit: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + limit
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def kill_subscriber_connections(store: EventStore, name: str) -> int:
    """CLIENT KILL, on every server, of the connections named ``name`` that are subscribed."""
    from redis.asyncio.cluster import RedisCluster

    killed = 0
    if store.cluster:
        listings = await store.redis.client_list(target_nodes=RedisCluster.PRIMARIES)
        per_node = listings.items() if isinstance(listings, dict) else []
        for node_name, clients in per_node:
            node = store.redis.get_node(node_name=node_name)
            for client in clients:
                if client.get("name") == name and int(client.get("ssub", 0)) > 0:
                    killed += await store.redis.execute_command("CLIENT", "KILL", "ID", client["id"], target_nodes=node)
    else:
        for client in await store.redis.client_list():
            if client.get("name") == name and int(client.get("ssub", 0)) > 0:
                killed += await store.redis.execute_command("CLIENT", "KILL", "ID", client["id"])
    return killed


def _getkeys_calls(cluster) -> int:
    """How many ``COMMAND GETKEYS`` the cluster's masters have answered so far."""
    total = 0
    for master in cluster.masters:
        with master.client() as client:
            total += int(client.info("commandstats").get("cmdstat_command|getkeys", {}).get("calls", 0))
    return total


async def test_a_cluster_read_of_many_games_costs_no_key_lookup_round_trips(cluster, new_game_id) -> None:
    """``read_many`` on a cluster is one read per game, pipelined per master: never an ``XREAD``,
    whose keys redis-py's cluster client finds by asking a server (``COMMAND GETKEYS``) once per
    command while it builds the pipeline, which stalled the node's reader on every poll."""
    store = await EventStore.connect(cluster.url, cluster=None)
    games = [new_game_id() for _ in range(24)]
    try:
        for i, game in enumerate(games):
            events = [NewEvent("a", {"n": n}) for n in range(1 + i % 3)]
            await store.append(game, events, expected_version=0, command_id=None, actor=None, ts=TS)
        before = _getkeys_calls(cluster)
        got = await store.read_many({game: i % 2 for i, game in enumerate(games)})
        assert _getkeys_calls(cluster) == before
        wanted = {game: (await store.read(game))[i % 2 :] for i, game in enumerate(games)}
        assert got == {game: events for game, events in wanted.items() if events}
        assert await store.read_many({game: 1 + i % 3 for i, game in enumerate(games)}) == {}
    finally:
        await store.close()
