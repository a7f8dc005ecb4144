"""The event store: one Redis stream per game, appended to atomically, read and followed.

Layout (``{ID}`` is a cluster hash tag, so everything of one game lives in one slot and the
append script stays atomic on Redis Cluster)::

    game:{ID}:events   stream; entry id "<version>-0"; fields b (msgpack body), p (prev hash), h (hash)
    game:{ID}:meta     hash; each value msgpack-encoded, so ints and lists come back as they went in
    game:{ID}:cmds     hash; command id -> "first,last" versions it produced (idempotency)
    game:{ID}:live     sharded pub/sub channel; the append script SPUBLISHes the new last version
    donjon:lobby:<status>:{lobby-<n>}  sorted sets of game ids, the lobby's 16 shards (:meth:`EventStore.set_status`)

On Redis Cluster (detected with ``INFO cluster`` by :meth:`EventStore.connect`, or forced) the
store uses ``redis.asyncio.RedisCluster``: every command names the keys of one slot, reads over
many games go one command per game in a pipeline that the client splits by master, and the
lobby's shards spread its writes over the masters.


The only write to a stream is :meth:`EventStore.append`, one Lua script (``append.lua``): it
checks the command id, then the expected version, then appends the whole batch with its hash
chain, or nothing. Events are never rewritten or trimmed. The appends made in one event-loop
turn travel together as one pipeline (:mod:`events.batcher`), each keeping its own result.

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

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from types import TracebackType
from typing import Any, cast

import msgpack
import redis.asyncio as aioredis
import redis.exceptions as rexc
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.crc import key_slot

from events import codec
from events.batcher import AppendBatcher, BatchStats
from events.chain import link_hash, verify_bodies
from events.envelope import GENESIS_HASH, Envelope, NewEvent
from events.errors import (
    ChainBroken,
    ConflictError,
    GameExists,
    StoreError,
    StoreUnavailable,
    UnknownGame,
)

__all__ = [
    "LOBBY_SHARDS",
    "AppendResult",
    "BatchStats",
    "EventStore",
    "cmds_key",
    "events_key",
    "game_of_channel",
    "is_cluster",
    "live_channel",
    "lobby_key",
    "lobby_keys",
    "lobby_shard",
    "meta_key",
]

_APPEND_LUA = resources.files("events").joinpath("append.lua").read_text(encoding="utf-8")

# The creation of a game: KEYS[1] meta, KEYS[2] events, KEYS[3] cmds. Besides the meta it makes
# the (empty) stream and the command-id hash (with the field "", never a command id), so every
# key of the append script exists from the start: in a slot that is being migrated, a script
# whose keys exist only in part is answered TRYAGAIN until the move completes.
_CREATE_LUA = """#!lua
if redis.call("EXISTS", KEYS[1]) == 1 or redis.call("XLEN", KEYS[2]) > 0 then return 0 end
redis.call("HSET", KEYS[1], unpack(ARGV))
if redis.call("EXISTS", KEYS[2]) == 0 then
  redis.call("XADD", KEYS[2], "0-1", "made", "1")
  redis.call("XDEL", KEYS[2], "0-1")
end
redis.call("HSET", KEYS[3], "", "0,0")
return 1
"""

_UPDATE_META_LUA = """#!lua
if redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
redis.call("HSET", KEYS[1], unpack(ARGV))
return 1
"""

# The status write of the lobby: KEYS[1] the meta hash, ARGV[1] the msgpack-encoded status,
# ARGV[2] the version it describes (0: no version check), ARGV[3..] more field/value pairs.
# Refuses (``{"stale", old}``) a write older than the one stored, so crossing writers of two
# nodes leave the newest; returns ``{"ok", old}`` with the status it replaced ("" for none).
_FILE_STATUS_LUA = """#!lua
local old = redis.call("HGET", KEYS[1], "status") or ""
local version = tonumber(ARGV[2])
if version > 0 then
  local stored = redis.call("HGET", KEYS[1], "status_version")
  if stored and cmsgpack.unpack(stored) > version then return {"stale", old} end
end
redis.call("HSET", KEYS[1], "status", ARGV[1], unpack(ARGV, 3))
if version > 0 then redis.call("HSET", KEYS[1], "status_version", cmsgpack.pack(version)) end
return {"ok", old}
"""

_PAGE = 1000
"""Events per XRANGE/XREAD round trip when reading history."""

DEFAULT_MAX_APPEND_BATCH = 128
"""Most appends sent in one pipeline; a longer burst in one loop turn becomes several batches."""

_MAX_BLOCK_MS = 5000
"""Longest single XREAD BLOCK; longer waits loop. A store whose client has a socket timeout
blocks at most half of it per round trip (:func:`_block_cap_ms`), so the timeout never fires on
a wait, only on a server that does not answer."""

DEFAULT_TIMEOUT = 2.0
"""Seconds one call waits for the server's reply before :class:`StoreUnavailable`."""

_CLUSTER_POLL_S = 0.02
"""On a cluster, a blocking :meth:`EventStore.read_many` over several slots polls this often."""

LOBBY_SHARDS = 16
"""Sorted sets per lobby status; a game's shard is fixed by its id (CRC-16 of the id, mod 16)."""

# Replies that mean "the server cannot serve now", not "your request is wrong" (MOVED and ASK
# too: the cluster client follows them, so one that surfaces means the slots kept moving).
_UNAVAILABLE_PREFIXES = (
    "OOM", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "LOADING", "BUSY", "MOVED", "ASK",
)


def connection_settings(redis: Any) -> dict[str, Any]:
    """The settings the client makes its connections with (a cluster client: those of every node)."""
    if isinstance(redis, RedisCluster):
        return dict(redis.nodes_manager.connection_kwargs)
    return dict(redis.connection_pool.connection_kwargs)


def _block_cap_ms(redis: Any) -> int:
    """The longest XREAD BLOCK that stays well under the client's socket timeout."""
    timeout = connection_settings(redis).get("socket_timeout")
    if not timeout:
        return _MAX_BLOCK_MS
    return max(1, min(_MAX_BLOCK_MS, int(timeout * 1000 / 2)))


def _check_game_id(game_id: str) -> str:
    if not isinstance(game_id, str) or not game_id or "{" in game_id or "}" in game_id:
        raise ValueError(f"game id must be a non-empty str without braces, got {game_id!r}")
    return game_id


def events_key(game_id: str) -> str:
    """The stream key of a game: ``game:{ID}:events``."""
    return f"game:{{{_check_game_id(game_id)}}}:events"


def meta_key(game_id: str) -> str:
    """The metadata hash key of a game: ``game:{ID}:meta``."""
    return f"game:{{{_check_game_id(game_id)}}}:meta"


def cmds_key(game_id: str) -> str:
    """The applied-command-ids hash key of a game: ``game:{ID}:cmds``."""
    return f"game:{{{_check_game_id(game_id)}}}:cmds"


def live_channel(game_id: str) -> str:
    """The sharded pub/sub channel the append script announces new versions on: ``game:{ID}:live``."""
    return f"game:{{{_check_game_id(game_id)}}}:live"


def game_of_channel(channel: bytes | str) -> str:
    """The game id of a :func:`live_channel` name."""
    name = channel.decode() if isinstance(channel, bytes) else channel
    return name[name.index("{") + 1 : name.index("}")]


def lobby_shard(game_id: str) -> int:
    """Which of the :data:`LOBBY_SHARDS` sorted sets of a status holds ``game_id``."""
    return key_slot(_check_game_id(game_id).encode()) % LOBBY_SHARDS


def lobby_key(status: str, shard: int | None = None) -> str:
    """A sorted set of the games in ``status``: shard ``n`` is ``donjon:lobby:<status>:{lobby-<n>}``.

    Without ``shard``, the single unsharded set ``donjon:lobby:<status>`` of earlier versions,
    which listings still read (and status changes still clear) so that older games stay listed.
    """
    if shard is None:
        return f"donjon:lobby:{status}"
    return f"donjon:lobby:{status}:{{lobby-{shard}}}"


def lobby_keys(status: str) -> list[str]:
    """Every sorted set a listing of ``status`` reads: the shards, then the unsharded one."""
    return [lobby_key(status, shard) for shard in range(LOBBY_SHARDS)] + [lobby_key(status)]


def is_cluster(redis: Any) -> bool:
    """True when ``redis`` is a cluster client."""
    return isinstance(redis, RedisCluster)


async def detect_cluster(url: str, *, connect_timeout: float = 3.0) -> bool:
    """Ask the server at ``url`` whether it is a Redis Cluster node (``INFO cluster``)."""
    probe = aioredis.Redis.from_url(url, socket_connect_timeout=connect_timeout, socket_timeout=connect_timeout)
    try:
        info = await probe.info("cluster")
    except _CLIENT_ERRORS as exc:
        raise _translated(exc) from exc
    finally:
        with contextlib.suppress(Exception):
            await probe.aclose()
    return int(info.get("cluster_enabled", 0)) == 1




@dataclass(frozen=True, slots=True)
class AppendResult:
    """Versions of the first and last event a command produced; ``duplicate`` when it was a replay."""

    first_version: int
    last_version: int
    duplicate: bool = False
    head: str = ""
    """The chain hash of the last event appended, when the store computed it (SHA-256 games)."""


_CLIENT_ERRORS = (rexc.RedisError, rexc.RedisClusterException, OSError, asyncio.TimeoutError)
"""What redis-py and the sockets under it raise; :func:`_translated` maps each to a store error.
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


def _translated(exc: BaseException) -> BaseException:
    """The store's own (PEP 249-like) error for a redis-py or socket exception, caused by it.

    The message starts with the exception's class name (``MovedError``, ``ClusterDownError``...),
    so a log line says what really happened."""
    what = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, _UNAVAILABLE_ERRORS):
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


def _sha256_links(prev: str, bodies: Sequence[bytes]) -> str:
    """The append script's ARGV[4] for a SHA-256 game: ``prev`` then each body's chain hash."""
    links = [prev]
    for body in bodies:
        links.append(link_hash(links[-1], body, "sha256"))
    return "".join(links)


def _pack_fields(fields: Mapping[str, Any]) -> list[Any]:
    flat: list[Any] = []
    for name, value in fields.items():
        if not isinstance(name, str):
            raise TypeError(f"metadata field names must be str, got {name!r}")
        flat += [name, msgpack.packb(value, use_bin_type=True)]
    return flat


def _unpack_fields(raw: Mapping[bytes, bytes]) -> dict[str, Any]:
    return {name.decode(): msgpack.unpackb(value, raw=False) for name, value in raw.items()}


# redis-py annotates each reply for every client set-up (``str`` with ``decode_responses``,
# ``None`` where RESP3 may say nothing); this store's client always answers bytes, so its replies
# get their real types here, once. ``cast`` only: nothing is converted at run time.
_Entry = tuple[bytes, dict[bytes, bytes]]
"""One stream entry as the client returns it: its id and its fields."""


def _bytes(reply: Any) -> bytes:
    return cast(bytes, reply)


def _byte_list(reply: Any) -> list[bytes]:
    return cast("list[bytes]", reply)


def _fields(reply: Any) -> dict[bytes, bytes]:
    return cast("dict[bytes, bytes]", reply)


def _entries(reply: Any) -> list[_Entry]:
    """An XRANGE or XREVRANGE reply."""
    return cast("list[_Entry]", reply)


def _streams(reply: Any) -> list[tuple[bytes, list[_Entry]]]:
    """An XREAD reply: ``(stream key, entries)`` per stream with new entries (``None``: none had any)."""
    return cast("list[tuple[bytes, list[_Entry]]]", reply or [])


class _Call:
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
        if isinstance(error, _CLIENT_ERRORS):
            raise _translated(error) from error


class EventStore:
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
    ) -> None:
        self.redis: Any = redis  # redis-py's own annotations do not describe its replies
        self.cluster = is_cluster(redis)
        """True on Redis Cluster: multi-game reads go one command per game."""
        self._timeout = call_timeout
        self._max_block_ms = _block_cap_ms(redis)
        self._owns_client = owns_client
        self._upcasters = upcasters
        self._append_script = redis.register_script(_APPEND_LUA)
        self._create_script = redis.register_script(_CREATE_LUA)
        self._update_meta_script = redis.register_script(_UPDATE_META_LUA)
        self._file_status_script = redis.register_script(_FILE_STATUS_LUA)
        self._batcher = (
            AppendBatcher(
                redis, self._append_script, max_batch=max_append_batch, translate=_translated, timeout=call_timeout
            )
            if batch_appends
            else None
        )

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
    ) -> EventStore:
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
        """
        if cluster is None:
            cluster = await detect_cluster(url, connect_timeout=call_timeout)
        retry = Retry(ExponentialBackoff(cap=0.2, base=0.05), retries=2, supported_errors=(rexc.ConnectionError,))
        client: aioredis.Redis | RedisCluster
        if cluster:
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
            except _CLIENT_ERRORS as exc:
                raise _translated(exc) from exc
        else:
            pool = aioredis.BlockingConnectionPool.from_url(
                url,
                max_connections=max_connections,
                timeout=call_timeout,
                socket_timeout=call_timeout,
                socket_connect_timeout=call_timeout,
                client_name=client_name,
                retry=retry,
            )
            client = aioredis.Redis.from_pool(pool)
        return cls(
            client,
            owns_client=True,
            call_timeout=call_timeout,
            upcasters=upcasters,
            batch_appends=batch_appends,
            max_append_batch=max_append_batch,
        )

    def _call(self, budget: float | None = None) -> _Call:
        """One call to the server: ``async with self._call(): ...`` (see :class:`_Call`), within
        ``budget`` seconds, or the store's ``call_timeout`` by default."""
        return _Call(self._timeout if budget is None else budget)

    @property
    def append_batches(self) -> BatchStats | None:
        """How appends went to the server (pipelines, appends, largest); ``None`` when not batching."""
        return None if self._batcher is None else self._batcher.stats

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
        async with self._call(budget):
            if isinstance(self.redis, RedisCluster):
                await self.redis.ping(target_nodes=RedisCluster.PRIMARIES)
            else:
                await self.redis.ping()

    def feed(self) -> Any:
        """A new :class:`events.feed.GameFeed`: notices of appends to the games it watches."""
        from events.feed import GameFeed

        return GameFeed(self)

    # --- games and their metadata ----------------------------------------------------------

    async def create_game(self, game_id: str, meta: Mapping[str, Any]) -> None:
        """Record a new game's metadata; :class:`GameExists` if the id has metadata or events.

        Values may be anything msgpack encodes (str, int, bool, None, bytes, lists, dicts) and
        come back from :meth:`get_meta` as they went in.
        """
        if not meta:
            raise ValueError("create_game needs at least one metadata field")
        keys = [meta_key(game_id), events_key(game_id), cmds_key(game_id)]
        async with self._call():
            created = await self._create_script(keys=keys, args=_pack_fields(meta))
        if not created:
            raise GameExists(game_id)

    async def get_meta(self, game_id: str) -> dict[str, Any] | None:
        """The game's metadata, or ``None`` when there is no such game."""
        async with self._call():
            raw = _fields(await self.redis.hgetall(meta_key(game_id)))
        return _unpack_fields(raw) if raw else None

    async def update_meta(self, game_id: str, fields: Mapping[str, Any]) -> None:
        """Set some metadata fields of an existing game (:class:`UnknownGame` otherwise)."""
        if not fields:
            return
        async with self._call():
            updated = await self._update_meta_script(keys=[meta_key(game_id)], args=_pack_fields(fields))
        if not updated:
            raise UnknownGame(game_id)

    # --- appending ------------------------------------------------------------------------

    async def append(
        self,
        game_id: str,
        events: Sequence[NewEvent],
        *,
        expected_version: int,
        command_id: str | None,
        actor: int | None,
        command: dict[str, Any] | None = None,
        ts: int,
        link: str | None = None,
    ) -> AppendResult:
        """Append ``events`` as versions ``expected_version + 1 ...``, all of them or none.

        If ``command_id`` was applied to this game already, nothing is appended and the earlier
        result comes back with ``duplicate=True`` (whatever ``expected_version`` says now).
        Otherwise :class:`ConflictError` when the stream is not at ``expected_version``.
        ``command`` goes on the first event only. Events may be :class:`NewEvent` or anything
        with ``type`` and ``payload`` attributes (and optionally ``schema``), such as
        :class:`games.base.Event`. :class:`~events.errors.InvalidEvent` (before anything is sent)
        for a payload that is not msgpack/JSON-safe.

        A retried call whose first try was applied but whose reply was lost (a connection reset)
        comes back as a duplicate with a ``command_id``, and as a conflict without one. All of
        this holds the same when the append travels in a batch with others (see the class).

        ``link`` is the chain hash of the event at ``expected_version`` in a SHA-256 game (its
        genesis for a new one): the batch is hashed here and the script refuses it, with
        :class:`~events.errors.ChainBroken`, unless ``link`` is the stored head. ``None``: a
        SHA-1 game, hashed by the script.
        """
        if not events:
            raise ValueError("append needs at least one event")
        if not isinstance(expected_version, int) or expected_version < 0:
            raise ValueError(f"expected_version must be an int >= 0, got {expected_version!r}")
        if command_id == "":
            raise ValueError("command_id must be None or a non-empty str")
        bodies = [
            codec.encode_new(
                game_id,
                expected_version + i + 1,
                event,
                command_id=command_id,
                actor=actor,
                ts=ts,
                command=command if i == 0 else None,
            )
            for i, event in enumerate(events)
        ]
        keys = [events_key(game_id), cmds_key(game_id)]
        links = "" if link is None else _sha256_links(link, bodies)
        args: list[int | str | bytes] = [expected_version, command_id or "", live_channel(game_id), links, *bodies]
        if self._batcher is not None:
            reply = await self._batcher.call(keys, args)  # bounded and translated by the batcher
        else:
            async with self._call():
                reply = await self._append_script(keys=keys, args=args)
        outcome = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
        if outcome == "conflict":
            raise ConflictError(game_id, expected_version, int(reply[1]))
        if outcome == "unlinked":
            why = "a SHA-256 game's batch needs its link" if link is None else f"{link} is not the stored head"
            raise ChainBroken(game_id, expected_version + 1, f"the batch does not link: {why}")
        head = links[-64:] if links and outcome == "ok" else ""
        return AppendResult(int(reply[1]), int(reply[2]), duplicate=outcome == "dup", head=head)

    async def command_result(self, game_id: str, command_id: str) -> AppendResult | None:
        """What an earlier append with ``command_id`` produced (``duplicate=True``), or ``None``.

        The same answer a repeated :meth:`append` would give, without deciding the command again.
        """
        async with self._call():
            done = await self.redis.hget(cmds_key(game_id), command_id)
        if done is None:
            return None
        first, _, last = _bytes(done).decode().partition(",")
        return AppendResult(int(first), int(last), duplicate=True)

    # --- reading --------------------------------------------------------------------------

    async def version(self, game_id: str) -> int:
        """The version of the game's last event; 0 when the stream is empty or missing."""
        return (await self.head(game_id))[0]

    async def head(self, game_id: str) -> tuple[int, str]:
        """``(version, hash)`` of the last event; ``(0, GENESIS_HASH)`` for an empty stream."""
        async with self._call():
            last = _entries(await self.redis.xrevrange(events_key(game_id), "+", "-", count=1))
        if not last:
            return 0, GENESIS_HASH
        entry, fields = last[0]
        return codec.version_of_entry_id(entry), fields.get(b"h", b"").decode()

    async def read(
        self,
        game_id: str,
        from_version: int = 1,
        to_version: int | None = None,
        *,
        upcast: bool = True,
    ) -> list[Envelope]:
        """Events ``from_version`` to ``to_version`` (inclusive; default: to the end).

        ``upcast=False`` returns them exactly as stored, which is what an export for auditors
        (:func:`events.codec.dump_log`, :func:`events.chain.verify_envelopes`) needs.
        """
        upcasters = self._upcasters if upcast else None
        return [
            codec.decode_entry(entry, fields, upcasters=upcasters)
            async for entry, fields in self._raw_range(game_id, from_version, to_version)
        ]

    async def _raw_range(
        self, game_id: str, from_version: int, to_version: int | None
    ) -> AsyncIterator[tuple[bytes, dict[bytes, bytes]]]:
        key = events_key(game_id)
        start = codec.entry_id(max(from_version, 1))
        end = "+" if to_version is None else codec.entry_id(to_version)
        while True:
            async with self._call():
                page = _entries(await self.redis.xrange(key, start, end, count=_PAGE))
            for entry in page:
                yield entry
            if len(page) < _PAGE:
                return
            start = codec.entry_id(codec.version_of_entry_id(page[-1][0]) + 1)

    async def subscribe(
        self, game_id: str, from_version: int = 1, *, block_ms: int = 2000
    ) -> AsyncIterator[Envelope]:
        """Every event from ``from_version`` on: the history, then new events as they come.

        One mechanism serves both (XREAD after the last version seen, blocking up to
        ``block_ms`` per round trip when nothing is new), so nothing is skipped or repeated.
        Runs until the caller stops iterating or cancels; raises :class:`StoreUnavailable` when
        the server goes away, after which the caller resubscribes from the version it needs next.
        """
        key = events_key(game_id)
        next_version = max(from_version, 1)
        block = max(1, min(block_ms, self._max_block_ms))
        while True:
            async with self._call():
                reply = await self.redis.xread({key: codec.entry_id(next_version - 1)}, count=_PAGE, block=block)
            for _stream, entries in _streams(reply):
                for entry, fields in entries:
                    envelope = codec.decode_entry(entry, fields, upcasters=self._upcasters)
                    if envelope.version != next_version:
                        raise StoreError(
                            f"game {game_id!r}: subscription expected version {next_version}, got {envelope.version}"
                        )
                    next_version += 1
                    yield envelope

    async def read_many(
        self, positions: Mapping[str, int], block_ms: int | None = None, *, count: int | None = None
    ) -> dict[str, list[Envelope]]:
        """For each game id, the events after the version given.

        Only games with new events appear in the result. With ``block_ms`` (> 0) and nothing new,
        waits up to that long for the first new event on any of them; ``None`` or 0 never waits.
        ``count`` caps the events returned per game. On one server this is one ``XREAD`` over
        every stream; on a cluster, one ``XRANGE`` per game in a pipeline that the client sends
        to each master at once (a multi-key ``XREAD`` across slots is refused there), and a
        blocking call polls every 20 ms.
        """
        if not positions:
            return {}
        deadline = None if not block_ms else time.monotonic() + block_ms / 1000
        while True:
            block = None
            if deadline is not None:
                remaining_ms = int((deadline - time.monotonic()) * 1000)
                block = max(1, min(remaining_ms, self._max_block_ms))
            if self.cluster:
                got = await self._read_each(positions, count)
            else:
                got = await self._read_together(positions, count, block)
            if got or deadline is None or time.monotonic() >= deadline:
                return got
            if self.cluster:
                await asyncio.sleep(min(_CLUSTER_POLL_S, max(0.0, deadline - time.monotonic())))

    async def _read_together(
        self, positions: Mapping[str, int], count: int | None, block: int | None
    ) -> dict[str, list[Envelope]]:
        streams = {events_key(game_id): codec.entry_id(version) for game_id, version in positions.items()}
        games = {events_key(game_id).encode(): game_id for game_id in positions}
        async with self._call():
            reply = await self.redis.xread(streams, count=count, block=block)
        return {games[stream]: self._decoded(entries) for stream, entries in reply or () if entries}

    async def _read_each(self, positions: Mapping[str, int], count: int | None) -> dict[str, list[Envelope]]:
        # XRANGE from the next version's id, not XREAD after the last one: redis-py's cluster
        # client finds XREAD's keys by asking the server (``COMMAND GETKEYS``, one round trip
        # per command while it builds the pipeline: ~10 ms for 60 games on an idle machine, and
        # the node's reader stalled ~200 ms behind every safety-net poll under load), while
        # XRANGE's key is its first argument. Ids are ``<version>-0``, so the two read the same.
        order = list(positions)
        async with self._call(), self.redis.pipeline(transaction=False) as pipe:
            for game_id in order:
                pipe.xrange(events_key(game_id), min=codec.entry_id(positions[game_id] + 1), max="+", count=count)
            replies = await pipe.execute()
        return {game_id: self._decoded(entries) for game_id, entries in zip(order, replies, strict=True) if entries}

    def decode_notice(self, game_id: str, payload: bytes) -> list[Envelope]:
        """The events an append notice (``game:{ID}:live``) carries, as :meth:`read` returns them;
        empty when it carries only the new version, or anything that is not this game's."""
        try:
            carried = msgpack.unpackb(payload, raw=True)
            if not isinstance(carried, list):
                return []
            envelopes = [
                codec.decode_body(body, prev.decode(), hash_.decode(), upcasters=self._upcasters)
                for body, prev, hash_ in carried
            ]
        except (ValueError, TypeError, StoreError, msgpack.UnpackException):
            return []
        return envelopes if all(envelope.game_id == game_id for envelope in envelopes) else []

    def _decoded(self, entries: Sequence[tuple[bytes, dict[bytes, bytes]]]) -> list[Envelope]:
        return [codec.decode_entry(entry, fields, upcasters=self._upcasters) for entry, fields in entries]

    async def raw_entries(self, game_id: str) -> list[tuple[int, bytes, str, str]]:
        """Every stored event as ``(version, body, prev_hash, hash)``: the exact bytes the chain covers."""
        return [
            (codec.version_of_entry_id(entry), fields.get(b"b", b""), fields.get(b"p", b"").decode(),
             fields.get(b"h", b"").decode())
            async for entry, fields in self._raw_range(game_id, 1, None)
        ]

    async def verify_chain(self, game_id: str) -> str:
        """Check every stored event's hash link; the last hash. :class:`ChainBroken` at the first bad one."""
        return verify_bodies(game_id, await self.raw_entries(game_id))

    # --- lobby index ----------------------------------------------------------------------

    async def set_status(
        self,
        game_id: str,
        status: str,
        score: float,
        *,
        version: int = 0,
        fields: Mapping[str, Any] | None = None,
    ) -> bool:
        """File the game under ``status`` in the lobby index (and out of its previous status).

        The status is also kept in the game's metadata as ``status``, with ``fields`` (more
        metadata, such as the lobby entry) written in the same step. ``score`` orders the
        listing (the creation time, say). Three steps, in an order that a crash between any
        two leaves the game listed under the status its metadata names: add to the new
        status's set, write the metadata, remove from the old status's sets. A crash may leave
        it in the old status's set too; listings check the metadata (see
        :func:`projections.lobby.list_lobby`).

        With ``version`` (> 0), a write older than the one stored is refused (``False``;
        nothing in the metadata changes), so two nodes' crossing writes keep the newest.
        """
        shard = lobby_shard(game_id)
        packed = _pack_fields(fields or {})
        async with self._call():
            await self.redis.zadd(lobby_key(status, shard), {game_id: score})
            reply = await self._file_status_script(
                keys=[meta_key(game_id)],
                args=[msgpack.packb(status, use_bin_type=True), int(version), *packed],
            )
            outcome = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
            old = msgpack.unpackb(reply[1], raw=False) if reply[1] else None
            if outcome == "ok" and isinstance(old, str) and old != status:
                await self.redis.zrem(lobby_key(old, shard), game_id)
                await self.redis.zrem(lobby_key(old), game_id)
        return outcome == "ok"

    async def is_filed(self, game_id: str, status: str) -> bool:
        """True when the game is in ``status``'s lobby index (its shard, or the unsharded set)."""
        async with self._call():
            if await self.redis.zscore(lobby_key(status, lobby_shard(game_id)), game_id) is not None:
                return True
            return await self.redis.zscore(lobby_key(status), game_id) is not None

    async def list_games(
        self, status: str, limit: int = 50, offset: int = 0, *, newest_first: bool = True
    ) -> list[str]:
        """Game ids filed under ``status``, highest score first (lowest first if not ``newest_first``).

        Reads the first ``offset + limit`` of every shard (one pipeline) and merges them; an id
        found twice counts once."""
        if limit <= 0:
            return []
        wanted = offset + limit
        async with self._call(), self.redis.pipeline(transaction=False) as pipe:
            for key in lobby_keys(status):
                pipe.zrange(key, 0, wanted - 1, desc=newest_first, withscores=True)
            shards = await pipe.execute()
        best: dict[bytes, float] = {}
        for members in shards:
            for member, score in members:
                best[member] = score if member not in best else (max if newest_first else min)(best[member], score)
        ranked = sorted(best.items(), key=lambda item: (item[1], item[0]), reverse=newest_first)
        return [member.decode() for member, _ in ranked[offset:wanted]]

    async def count_games(self, status: str) -> int:
        """How many games are filed under ``status`` (a game left in the unsharded set and a
        shard by a crash counts twice)."""
        async with self._call(), self.redis.pipeline(transaction=False) as pipe:
            for key in lobby_keys(status):
                pipe.zcard(key)
            return sum(int(n) for n in await pipe.execute())
