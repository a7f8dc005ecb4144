"""The sharded index (events/sharded.py), the one shape of the lobby, the due bots and the
deadlines, against real servers (embedded Valkey, a three-master cluster, the external Redis):
where members go, each write and read, the legacy key beside the shards, and the errors."""

from __future__ import annotations

import socket
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from events.deadlines import Deadlines, deadlines_key
from events.deadlines import shard_of as deadline_shard
from events.due import DueBots, due_key
from events.due import shard_of as due_shard
from events.errors import StoreUnavailable
from events.keys import lobby_key
from events.server import Server
from events.sharded import ShardedIndex
from events.store import EventStore
from events.store.lobby import lobby_index

SHARDS = 4


def _shard(member: str) -> int:
    return int(member.rsplit("-", 1)[1]) % SHARDS  # "m-7" -> shard 3: tests choose the shard


@pytest.fixture
async def index(redis_url: str) -> AsyncIterator[ShardedIndex]:
    prefix = f"donjon:test-sharded:{uuid.uuid4().hex[:12]}"
    store = await EventStore.connect(redis_url, cluster=None)
    made = ShardedIndex(
        store.server, key=lambda n: f"{prefix}:{{{n}}}", shard_of=_shard, shards=SHARDS, legacy=f"{prefix}:old"
    )
    try:
        yield made
    finally:
        for key in made.every_key():
            await store.redis.delete(key)
        await store.close()


def test_a_member_has_one_shard_and_listings_read_every_shard_then_the_legacy_key() -> None:
    made = ShardedIndex(None, key=lambda n: f"k:{{{n}}}", shard_of=_shard, shards=SHARDS, legacy="k")  # type: ignore[arg-type]
    assert made.key_of("m-6") == "k:{2}"
    assert made.every_key() == ["k:{0}", "k:{1}", "k:{2}", "k:{3}", "k"]


def test_the_three_indexes_keep_their_key_names() -> None:
    """The names are data every node and every earlier version agrees on: never renamed."""
    server = Server(aioredis.Redis())
    due = DueBots(server).index
    assert due.every_key()[:2] == ["donjon:due-bots:{0}", "donjon:due-bots:{1}"]
    assert due.key_of("some-game") == due_key(due_shard("some-game"))
    assert Deadlines(server).index.key_of("some-game") == deadlines_key(deadline_shard("some-game"))
    assert Deadlines(server).index.every_key()[:2] == ["donjon:deadlines:{0}", "donjon:deadlines:{1}"]
    lobby = lobby_index(server, "open")
    assert lobby.every_key()[0] == lobby_key("open", 0) == "donjon:lobby:open:{lobby-0}"
    assert lobby.every_key()[-1] == lobby_key("open") == "donjon:lobby:open"
    assert len(lobby.every_key()) == 17


async def test_add_score_and_remove_one_member(index: ShardedIndex) -> None:
    assert await index.score("m-1") is None
    await index.add("m-1", 10)
    assert await index.score("m-1") == 10.0
    await index.add("m-1", 5)  # replaced, also backwards
    assert await index.score("m-1") == 5.0
    assert await index.server.redis.zscore(index.key_of("m-1"), "m-1") == 5.0  # in its own shard
    await index.remove("m-1")
    assert await index.score("m-1") is None


async def test_only_listed_never_lists_and_only_later_never_moves_back(index: ShardedIndex) -> None:
    await index.add("m-2", 50, only_listed=True, only_later=True)
    assert await index.score("m-2") is None
    await index.add("m-2", 50)
    await index.add("m-2", 40, only_listed=True, only_later=True)
    assert await index.score("m-2") == 50.0
    await index.add("m-2", 60, only_listed=True, only_later=True)
    assert await index.score("m-2") == 60.0


async def test_drop_if_unlists_only_at_the_score_read(index: ShardedIndex) -> None:
    await index.add("m-3", 70)
    assert await index.drop_if("m-3", 69) is False
    assert await index.score("m-3") == 70.0
    assert await index.drop_if("m-3", 70.0) is True
    assert await index.score("m-3") is None
    assert await index.drop_if("m-3", 70) is False


async def test_below_merges_the_shards_lowest_first_ties_by_id_within_the_limit(index: ShardedIndex) -> None:
    for n, score in enumerate([30, 10, 20, 10, 40, 50, 15, 25]):
        await index.add(f"m-{n}", score)
    assert await index.below(25, 10) == [
        ("m-1", 10.0), ("m-3", 10.0), ("m-6", 15.0), ("m-2", 20.0), ("m-7", 25.0)
    ]
    assert await index.below(100, 3) == [("m-1", 10.0), ("m-3", 10.0), ("m-6", 15.0)]
    assert await index.below(5, 10) == []
    assert await index.lowest() == 10.0
    assert await index.count() == 8


async def test_ranked_merges_shards_and_legacy_counting_a_member_once_at_its_best(index: ShardedIndex) -> None:
    for n in range(6):
        await index.add(f"m-{n}", 100 + n)
    redis = index.server.redis
    assert index.legacy is not None
    await redis.zadd(index.legacy, {"m-1": 500, "m-9": 1})  # an older version's listing, and a crash's double
    assert await index.ranked(3) == ["m-1", "m-5", "m-4"]
    assert await index.ranked(2, offset=2) == ["m-4", "m-3"]
    assert await index.ranked(3, highest_first=False) == ["m-9", "m-0", "m-1"]
    assert await index.ranked(0) == []
    assert await index.count() == 8  # the double counts twice, as documented
    assert await index.score("m-9") == 1.0  # found in the legacy key
    await index.remove("m-1")  # clears the legacy key too
    assert await redis.zscore(index.legacy, "m-1") is None
    assert "m-1" not in await index.ranked(10)


async def test_empty_index(index: ShardedIndex) -> None:
    assert await index.lowest() is None
    assert await index.count() == 0
    assert await index.below(10**12, 5) == []


async def test_an_unreachable_server_is_store_unavailable_for_every_call() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = aioredis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5)
    made = ShardedIndex(Server(client, timeout=2.0), key=lambda n: f"x:{{{n}}}", shard_of=_shard, shards=SHARDS)
    try:
        for call in (made.add("m-1", 1), made.score("m-1"), made.below(1, 1), made.count(), made.drop_if("m-1", 1)):
            with pytest.raises(StoreUnavailable):
                await call
    finally:
        await client.aclose()
