"""The store's server: one redis-py client, its calls bounded in time, its errors the store's.

:class:`Server` is the seam between the Redis event store and what lives beside it in the same
server (the due-bots index, the deadlines, the feed): each of them makes its calls through
``async with server.call(): ...`` and its scripts with :meth:`Server.script`, so every call has
the store's budget and raises the documented :mod:`events.errors` (every cluster or connection
trouble is :class:`~events.errors.StoreUnavailable`), never redis-py's exceptions.

>>> translated(ConnectionRefusedError("no server")).__class__.__name__
'StoreUnavailable'
>>> translated(rexc.ResponseError("WRONGTYPE Operation against a key")).__class__.__name__
'StoreError'
>>> translated(rexc.ResponseError("CLUSTERDOWN The cluster is down")).__class__.__name__
'StoreUnavailable'
>>> translated(RuntimeError("unable to perform operation on <TCPTransport closed=True>")).__class__.__name__
'StoreUnavailable'
>>> translated(RuntimeError("a bug of ours")).__class__.__name__
'RuntimeError'
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions as rexc
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.commands.core import AsyncScript

from events.batcher import AppendBatcher
from events.errors import StoreError, StoreUnavailable

__all__ = [
    "CLIENT_ERRORS",
    "Call",
    "Script",
    "Server",
    "connection_settings",
    "detect_cluster",
    "every_master_has_a_replica",
    "is_cluster",
    "lost_connection",
    "open_client",
    "translated",
]

# Replies that mean "the server cannot serve now", not "your request is wrong" (MOVED and ASK
# too: the cluster client follows them, so one that surfaces means the slots kept moving).
_UNAVAILABLE_PREFIXES = (
    "OOM", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "LOADING", "BUSY", "MOVED", "ASK",
)

CLIENT_ERRORS = (rexc.RedisError, rexc.RedisClusterException, OSError, asyncio.TimeoutError)
"""What redis-py and the sockets under it raise; :func:`translated` maps each to a store error.
``RedisClusterException`` (no node serves a slot, the cluster cannot be discovered, too many
redirections) is not a ``RedisError``, so it is named on its own."""

_UNAVAILABLE_ERRORS = (
    rexc.ConnectionError,
    rexc.TimeoutError,
    rexc.ClusterError,
    rexc.RedisClusterException,
    rexc.AskError,  # MovedError too: the client gave up following the slot
    rexc.TryAgainError,
    OSError,
    asyncio.TimeoutError,
)


def lost_connection(exc: BaseException) -> bool:
    """True for what redis-py raises, as other classes than its own, when a connection it was
    using is torn down under it (a master killed or failed over mid-call): ``RuntimeError`` from
    a closed transport, ``AttributeError`` from a connection whose writer is already gone. Only
    when raised inside redis-py or the transport, so a bug of ours is never taken for one."""
    if isinstance(exc, RuntimeError):
        return "closed" in str(exc) and "ransport" in str(exc)
    if not isinstance(exc, AttributeError) or "NoneType" not in str(exc):
        return False
    frame = exc.__traceback__
    innermost = None
    while frame is not None:
        innermost, frame = frame, frame.tb_next
    return innermost is not None and f"{os.sep}redis{os.sep}" in innermost.tb_frame.f_code.co_filename


def translated(exc: BaseException) -> BaseException:
    """The store's own (PEP 249-like) error for a redis-py or socket exception, caused by it.

    The message starts with the exception's class name (``MovedError``, ``ClusterDownError``...),
    so a log line says what really happened."""
    what = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, _UNAVAILABLE_ERRORS) or lost_connection(exc):
        error: StoreError = StoreUnavailable(f"event store unavailable: {what}")
    elif isinstance(exc, rexc.ResponseError) and str(exc).startswith(_UNAVAILABLE_PREFIXES):
        error = StoreUnavailable(f"event store cannot serve now: {what}")
    elif isinstance(exc, rexc.ResponseError):
        error = StoreError(f"event store refused a command: {what}")
    elif isinstance(exc, rexc.RedisError):
        error = StoreError(f"event store error: {what}")
    else:
        return exc  # not the client's: a bug, passed on as it is
    error.__cause__ = exc
    return error


def is_cluster(redis: Any) -> bool:
    """True when ``redis`` is a cluster client."""
    return isinstance(redis, RedisCluster)


def connection_settings(redis: Any) -> dict[str, Any]:
    """The settings the client makes its connections with (a cluster client: those of every node)."""
    if isinstance(redis, RedisCluster):
        return dict(redis.nodes_manager.connection_kwargs)
    return dict(redis.connection_pool.connection_kwargs)


async def detect_cluster(url: str, *, connect_timeout: float = 3.0) -> bool:
    """Ask the server at ``url`` whether it is a Redis Cluster node (``INFO cluster``)."""
    probe = aioredis.Redis.from_url(url, socket_connect_timeout=connect_timeout, socket_timeout=connect_timeout)
    try:
        info = await probe.info("cluster")
    except CLIENT_ERRORS as exc:
        raise translated(exc) from exc
    finally:
        with contextlib.suppress(Exception):
            await probe.aclose()
    return int(info.get("cluster_enabled", 0)) == 1


async def every_master_has_a_replica(server: Server) -> bool:
    """True when every master of the server (the one server, or each master of a cluster) has
    a replica connected now (``INFO replication``, ``connected_slaves``)."""
    redis: Any = server.redis
    async with server.call():
        if isinstance(redis, RedisCluster):
            replies = await redis.info("replication", target_nodes=RedisCluster.PRIMARIES)
            infos = list(replies.values()) if isinstance(replies, dict) and "role" not in replies else [replies]
        else:
            infos = [await redis.info("replication")]
    return bool(infos) and all(int(info.get("connected_slaves", 0)) >= 1 for info in infos)


async def open_client(
    url: str, *, cluster: bool, max_connections: int, call_timeout: float, client_name: str | None
) -> aioredis.Redis | RedisCluster:
    """The client :meth:`events.store.EventStore.connect` describes: a blocking pool on one
    server, or a cluster client that has learnt the slot map."""
    retry = Retry(ExponentialBackoff(cap=0.2, base=0.05), retries=2, supported_errors=(rexc.ConnectionError,))
    if not cluster:
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=call_timeout,
            socket_timeout=call_timeout,
            socket_connect_timeout=call_timeout,
            client_name=client_name,
            retry=retry,
        )
        return aioredis.Redis.from_pool(pool)
    client = RedisCluster.from_url(
        url,
        max_connections=max_connections,
        socket_timeout=call_timeout,
        socket_connect_timeout=call_timeout,
        client_name=client_name,
        retry=retry,
        # A MOVED reply patches the slot map (the reply names the new owner) and never
        # rebuilds it: a rebuild closes every connection, also those other commands are
        # using or connecting, which fail then (a race in redis-py's async client).
        reinitialize_steps=0,
    )
    # Learn the slot map now: first commands racing to do it tear down each other's
    # connections (redis-py's async cluster client).
    try:
        await client.initialize()
    except CLIENT_ERRORS as exc:
        raise translated(exc) from exc
    return client


class Call:
    """One call to the server: the store's errors instead of redis-py's, and at most ``budget``
    seconds (``None``: the client's own timeouts only), whatever redis-py's reconnects and
    retries would take. A class rather than a generator, since every store call pays for it."""

    __slots__ = ("_budget", "_deadline")

    def __init__(self, budget: float | None) -> None:
        self._budget = budget
        self._deadline: asyncio.Timeout | None = None

    async def __aenter__(self) -> None:
        if self._budget is not None:
            self._deadline = asyncio.timeout(self._budget)
            await self._deadline.__aenter__()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._deadline is not None:
            try:
                await self._deadline.__aexit__(kind, error, traceback)
            except TimeoutError as exc:  # the budget ran out, not one of redis-py's timeouts
                raise StoreUnavailable(f"event store did not answer within {self._budget:g} s") from exc
        if isinstance(error, CLIENT_ERRORS) or (error is not None and lost_connection(error)):
            raise translated(error) from error


class Script:
    """A Lua script registered on the server's client; calling it is one bounded, translated call.

    A script that writes, on a server whose writes replicas must confirm (``replica``
    durability), is sent with a ``WAIT`` after it on the same connection, through an
    :class:`~events.batcher.AppendBatcher` of its own: its reply counts only once a replica has
    the write, else the call fails as :class:`~events.errors.StoreUnavailable`. So what a node
    acknowledges besides appends (a game created, its metadata, its ledger entry, the keys)
    survives a failover too."""

    def __init__(self, server: Server, source: str, *, writes: bool = True) -> None:
        self.server = server
        self.inner: AsyncScript = server.redis.register_script(source)
        """redis-py's script object (its ``sha`` and ``script``), for whoever pipelines it."""
        self._confirmed = (
            AppendBatcher(
                server.redis, self.inner, max_batch=_CONFIRMED_BATCH, translate=translated,
                timeout=server.timeout, replicas=server.replicas, replica_timeout_ms=server.replica_timeout_ms,
            )
            if writes and server.replicas
            else None
        )

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        if self._confirmed is not None:
            return await self._confirmed.call(keys, args)
        async with self.server.call():
            return await self.inner(keys=keys, args=args)


_CONFIRMED_BATCH = 32
"""Most calls of one confirmed script sent in one pipeline before its ``WAIT``."""


class Server:
    """One client of a Redis-protocol server, as the store and its neighbours use it.

    ``redis`` is the client itself (redis-py's annotations do not describe its replies, hence
    ``Any``); ``timeout`` bounds every :meth:`call` (``None``: the client's timeouts only).
    """

    def __init__(
        self,
        redis: aioredis.Redis | RedisCluster,
        *,
        timeout: float | None = None,
        replicas: int = 0,
        replica_timeout_ms: int = 1000,
    ) -> None:
        self.redis: Any = redis
        self.cluster = is_cluster(redis)
        """True on Redis Cluster: multi-key commands go one key (or slot) at a time."""
        self.timeout = timeout
        self.replicas = replicas
        """Replicas that must confirm each script's writes (``WAIT``) before it returns; 0: none."""
        self.replica_timeout_ms = replica_timeout_ms

    def call(self, budget: float | None = None) -> Call:
        """One call to the server: ``async with server.call(): ...`` (see :class:`Call`), within
        ``budget`` seconds, or the server's ``timeout`` by default."""
        return Call(self.timeout if budget is None else budget)

    def script(self, source: str, *, writes: bool = True) -> Script:
        """``source`` registered as a :class:`Script` (sent, and loaded when missing, at its first
        call); ``writes=False`` for a script that only reads (no replica has anything to confirm)."""
        return Script(self, source, writes=writes)

    def connection_settings(self) -> dict[str, Any]:
        """The settings the client makes its connections with (see :func:`connection_settings`)."""
        return connection_settings(self.redis)
