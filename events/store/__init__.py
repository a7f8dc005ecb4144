"""The event store: one Redis stream per game, appended to atomically, read and followed.

Layout (``{ID}`` is a cluster hash tag, so everything of one game lives in one slot and the
append script stays atomic on Redis Cluster; the names are :mod:`events.keys`)::

    game:{ID}:events   stream; entry id "<version>-0"; fields b (msgpack body), p (prev hash), h (hash)
    game:{ID}:meta     hash; each value msgpack-encoded, so ints and lists come back as they went in
    game:{ID}:cmds     hash; command id -> "first,last" versions it produced (idempotency)
    game:{ID}:live     sharded pub/sub channel; the append script SPUBLISHes the new last version
    donjon:lobby:<status>:{lobby-<n>}  sorted sets of game ids, the lobby's 16 shards (:meth:`EventStore.set_status`)

On Redis Cluster (detected with ``INFO cluster`` by :meth:`EventStore.connect`, or forced) the
store uses ``redis.asyncio.RedisCluster``: every command names the keys of one slot, reads over
many games go one command per game in a pipeline that the client splits by master, and the
lobby's shards spread its writes over the masters.

:class:`EventStore` is assembled from one part per job, each its own module: appending
(:mod:`events.store.append`, the only write to a stream), reading (:mod:`events.store.read`),
metadata (:mod:`events.store.meta`) and the lobby index (:mod:`events.store.lobby`). Beside it,
on the same :class:`~events.server.Server`, live the due-bots index (``store.due_bots``), the
turn-clock deadlines (``store.deadlines``) and the append notices (``store.feed()``).
:class:`events.protocol.Store` is what the service relies on; this is its one implementation.

Every method raises :class:`~events.errors.StoreUnavailable` when the server cannot be reached,
and other :mod:`events.errors` classes for the store's own refusals; never redis-py exceptions.

>>> async def example(url):
...     store = await EventStore.connect(url)
...     await store.create_game("g1", {"game": "castle"})
...     await store.append("g1", [NewEvent("game.created", {})], expected_version=0,
...                        command_id=None, actor=None, ts=1700000000000)
...     return [e.type for e in await store.read("g1")]
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Literal, Self

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from events import codec
from events.batcher import AppendBatcher, BatchStats
from events.deadlines import Deadlines
from events.due import DueBots
from events.envelope import AppendResult, NewEvent
from events.feed import GameFeed
from events.keys import (
    LOBBY_SHARDS,
    cmds_key,
    events_key,
    game_of_channel,
    live_channel,
    lobby_key,
    lobby_keys,
    lobby_shard,
    meta_key,
)
from events.ledger import Ledger
from events.protocol import Hook
from events.server import (
    Server,
    connection_settings,
    detect_cluster,
    every_master_has_a_replica,
    is_cluster,
    open_client,
    translated,
)
from events.sharded import ShardedIndex
from events.store.append import APPEND_LUA, Appending
from events.store.lobby import FILE_STATUS_LUA, Lobby
from events.store.meta import CREATE_LUA, UPDATE_META_LUA, Metadata
from events.store.read import Reading, block_cap_ms

__all__ = [
    "DEFAULT_MAX_APPEND_BATCH",
    "DEFAULT_REPLICA_TIMEOUT_MS",
    "Durability",
    "DEFAULT_TIMEOUT",
    "LOBBY_SHARDS",
    "AppendResult",
    "BatchStats",
    "EventStore",
    "NewEvent",
    "cmds_key",
    "connection_settings",
    "detect_cluster",
    "events_key",
    "game_of_channel",
    "is_cluster",
    "live_channel",
    "lobby_key",
    "lobby_keys",
    "lobby_shard",
    "meta_key",
]

DEFAULT_MAX_APPEND_BATCH = 128
"""Most appends sent in one pipeline; a longer burst in one loop turn becomes several batches."""

DEFAULT_REPLICA_TIMEOUT_MS = 1000
"""How long an append waits for a replica's confirmation at ``replica`` durability."""

Durability = Literal["local", "replica", "auto"]

DEFAULT_TIMEOUT = 2.0
"""Seconds one call waits for the server's reply before :class:`StoreUnavailable`."""


class EventStore(Appending, Reading, Metadata, Lobby):
    """Append-only event streams in a Redis-protocol server (Redis 7+, Valkey 7+).

    Build it with ``await EventStore.connect(url)`` (which owns its client and closes it in
    :meth:`close`) or ``EventStore(redis_client)`` (the caller keeps ownership).
    ``upcasters`` is the registry applied to what :meth:`read`, :meth:`subscribe` and
    :meth:`read_many` return (:data:`events.codec.UPCASTERS` by default).

    With ``batch_appends`` (the default), the appends made in one event-loop turn go to the
    server as one pipeline of at most ``max_append_batch`` script calls
    (:mod:`events.batcher`); each keeps its own result and errors. ``batch_appends=False``
    sends each append on its own, for comparison. ``call_timeout`` (seconds) bounds every call,
    whatever redis-py's own timeouts and retries would take: :class:`StoreUnavailable` after it
    (``None``: only the client's timeouts). Use a store from one event loop.
    """

    def __init__(
        self,
        redis: aioredis.Redis | RedisCluster,
        *,
        owns_client: bool = False,
        upcasters: codec.Upcasters = codec.UPCASTERS,
        batch_appends: bool = True,
        max_append_batch: int = DEFAULT_MAX_APPEND_BATCH,
        call_timeout: float | None = None,
        replicas: int = 0,
        replica_timeout_ms: int = DEFAULT_REPLICA_TIMEOUT_MS,
    ) -> None:
        self.server = Server(redis, timeout=call_timeout, replicas=replicas, replica_timeout_ms=replica_timeout_ms)
        """The client and its call budget: the seam the indexes beside the store use."""
        self.redis = self.server.redis
        """The redis-py client itself (tests and the bench look at the server through it)."""
        self._max_block_ms = block_cap_ms(self.server)
        self._owns_client = owns_client
        self._upcasters = upcasters
        self._append_script = self.server.script(APPEND_LUA, writes=False)  # the batcher below confirms appends
        self._create_script = self.server.script(CREATE_LUA)
        self._update_meta_script = self.server.script(UPDATE_META_LUA)
        self._file_status_script = self.server.script(FILE_STATUS_LUA)
        self._lobbies: dict[str, ShardedIndex] = {}
        self._batcher = (
            AppendBatcher(
                redis,
                self._append_script.inner,
                max_batch=max_append_batch,
                translate=translated,
                timeout=call_timeout,
                replicas=replicas,
                replica_timeout_ms=replica_timeout_ms,
            )
            if batch_appends or replicas  # the replicas' confirmation rides on the batcher's connection
            else None
        )
        self._due_bots = DueBots(self.server)
        self._deadlines = Deadlines(self.server)
        self._ledger = Ledger(self.server)

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        max_connections: int = 256,
        call_timeout: float = DEFAULT_TIMEOUT,
        upcasters: codec.Upcasters = codec.UPCASTERS,
        batch_appends: bool = True,
        max_append_batch: int = DEFAULT_MAX_APPEND_BATCH,
        cluster: bool | None = False,
        client_name: str | None = None,
        durability: Durability = "local",
        replica_timeout_ms: int = DEFAULT_REPLICA_TIMEOUT_MS,
    ) -> Self:
        """A store on its own connection pool to ``url`` (``redis://``, ``rediss://``, ``unix://``).

        ``call_timeout`` (seconds) bounds each call as a whole (see the class): a server that does
        not answer (hung, not dead) fails it with :class:`StoreUnavailable` after that long. It is
        also the pool's wait for a free connection (the pool waits rather than failing when
        ``max_connections`` are busy) and the socket timeouts. A timeout is not retried (asking
        a hung server again only multiplies the wait); a connection the server closed or refused
        (a restart) is retried twice with a short backoff, within the call's ``timeout``.
        Nothing is sent until the first call. ``batch_appends`` and ``max_append_batch`` are the
        constructor's. ``client_name`` names every connection (``CLIENT LIST`` shows it).

        ``cluster``: ``False`` (the default) is one server; ``None`` asks the server
        (``INFO cluster``; :class:`StoreUnavailable` when it does not answer); ``True`` is a
        Redis Cluster. On a cluster, ``url`` is any one node; the client learns the slot map at
        once, finds the other masters and keeps up to ``max_connections`` per master (a call
        beyond that fails as :class:`StoreUnavailable`).

        ``durability``: ``local`` acknowledges an append once the server has it (fsynced, as
        the server's ``appendfsync`` says); ``replica`` only once one replica has it too
        (``WAIT 1``, at most ``replica_timeout_ms``, else :class:`StoreUnavailable`);
        ``auto`` is ``replica`` when every master has a replica connected now, else ``local``.
        """
        if cluster is None:
            cluster = await detect_cluster(url, connect_timeout=call_timeout)
        client = await open_client(
            url, cluster=cluster, max_connections=max_connections, call_timeout=call_timeout, client_name=client_name
        )
        if durability == "auto":
            replicated = await every_master_has_a_replica(Server(client, timeout=call_timeout))
            durability = "replica" if replicated else "local"
        return cls(
            client,
            owns_client=True,
            call_timeout=call_timeout,
            upcasters=upcasters,
            batch_appends=batch_appends,
            max_append_batch=max_append_batch,
            replicas=1 if durability == "replica" else 0,
            replica_timeout_ms=replica_timeout_ms,
        )

    @property
    def durability(self) -> Literal["local", "replica"]:
        """What an acknowledged append is safe from: ``local`` (the server's own disk), or
        ``replica`` (a replica has it too: a failover keeps it)."""
        return "replica" if self._batcher is not None and self._batcher.replicas else "local"

    @property
    def cluster(self) -> bool:
        """True on Redis Cluster: multi-game reads go one command per game."""
        return self.server.cluster

    @property
    def append_batches(self) -> BatchStats | None:
        """How appends went to the server (pipelines, appends, largest); ``None`` when not batching."""
        return None if self._batcher is None else self._batcher.stats

    @property
    def due_bots(self) -> DueBots:
        """The due-bots index (:mod:`events.due`) on this store's server."""
        return self._due_bots

    @property
    def deadlines(self) -> Deadlines:
        """The turn-clock deadlines (:mod:`events.deadlines`) on this store's server."""
        return self._deadlines

    @property
    def ledger(self) -> Ledger:
        """The public ledger of created games (:mod:`events.ledger`) on this store's server."""
        return self._ledger

    def feed(
        self,
        *,
        on_notice: Hook | None = None,
        on_reconnect: Hook | None = None,
        shown: Callable[[str], str | None] | None = None,
    ) -> GameFeed:
        """A new :class:`events.feed.GameFeed`: notices of appends to the games it watches.
        ``on_notice`` is called for every notice, ``on_reconnect`` for every subscriber
        connection lost (the node counts both); ``shown(game_id)``, the chain hash of the last
        event the watcher has shown, spares decoding the notices it has shown already."""
        return GameFeed(
            self.server, self.decode_notice, on_notice=on_notice, on_reconnect=on_reconnect, shown=shown,
            ends_at=self.notice_ends_at,
        )

    async def close(self) -> None:
        """Close the client and its pool, if :meth:`connect` made them, once the appends
        already sent have their replies."""
        if self._batcher is not None:
            await self._batcher.drain()
        if self._owns_client:
            with contextlib.suppress(Exception):
                await self.redis.aclose()

    async def ping(self, budget: float | None = None) -> None:
        """Return when the server answers, within ``budget`` seconds if given (else the store's
        ``call_timeout``); raise :class:`StoreUnavailable` otherwise."""
        async with self.server.call(budget):
            if isinstance(self.redis, RedisCluster):
                await self.redis.ping(target_nodes=RedisCluster.PRIMARIES)
            else:
                await self.redis.ping()
