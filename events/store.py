"""The event store: one Redis stream per game, appended to atomically, read and followed.

Layout (``{ID}`` is a cluster hash tag, so everything of one game lives in one slot and the
append script stays atomic on Redis Cluster)::

    game:{ID}:events   stream; entry id "<version>-0"; fields b (msgpack body), p (prev hash), h (hash)
    game:{ID}:meta     hash; each value msgpack-encoded, so ints and lists come back as they went in
    game:{ID}:cmds     hash; command id -> "first,last" versions it produced (idempotency)
    donjon:lobby:<status>  sorted set of game ids, for the lobby (see :meth:`EventStore.set_status`)

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
from dataclasses import dataclass
from importlib import resources
from typing import Any, AsyncIterator, Iterator, Mapping, Sequence

import msgpack
import redis.asyncio as aioredis
import redis.exceptions as rexc
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from events import codec
from events.batcher import AppendBatcher, BatchStats
from events.chain import verify_bodies
from events.envelope import GENESIS_HASH, Envelope, NewEvent
from events.errors import (
    ConflictError,
    GameExists,
    StoreError,
    StoreUnavailable,
    UnknownGame,
)

__all__ = ["AppendResult", "BatchStats", "EventStore", "events_key", "meta_key", "cmds_key", "lobby_key"]

_APPEND_LUA = resources.files("events").joinpath("append.lua").read_text(encoding="utf-8")

_CREATE_LUA = """#!lua
if redis.call("EXISTS", KEYS[1]) == 1 or redis.call("EXISTS", KEYS[2]) == 1 then return 0 end
redis.call("HSET", KEYS[1], unpack(ARGV))
return 1
"""

_UPDATE_META_LUA = """#!lua
if redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
redis.call("HSET", KEYS[1], unpack(ARGV))
return 1
"""

_PAGE = 1000
"""Events per XRANGE/XREAD round trip when reading history."""

DEFAULT_MAX_APPEND_BATCH = 128
"""Most appends sent in one pipeline; a longer burst in one loop turn becomes several batches."""

_MAX_BLOCK_MS = 5000
"""Longest single XREAD BLOCK; longer waits loop, so the socket timeout never fires on a wait."""

# Replies that mean "the server cannot serve now", not "your request is wrong".
_UNAVAILABLE_PREFIXES = ("OOM", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "LOADING", "BUSY")


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


def lobby_key(status: str) -> str:
    """The sorted set listing the games in ``status``: ``donjon:lobby:<status>``."""
    return f"donjon:lobby:{status}"


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Versions of the first and last event a command produced; ``duplicate`` when it was a replay."""

    first_version: int
    last_version: int
    duplicate: bool = False


_CLIENT_ERRORS = (rexc.RedisError, OSError, asyncio.TimeoutError)
"""What redis-py and the sockets under it raise; :func:`_translated` maps each to a store error."""


def _translated(exc: BaseException) -> BaseException:
    """The store's own (PEP 249-like) error for a redis-py or socket exception, caused by it."""
    if isinstance(exc, (rexc.ConnectionError, rexc.TimeoutError, OSError, asyncio.TimeoutError)):
        error: StoreError = StoreUnavailable(f"event store unavailable: {exc}")
    elif isinstance(exc, rexc.ResponseError) and str(exc).startswith(_UNAVAILABLE_PREFIXES):
        error = StoreUnavailable(f"event store cannot serve now: {exc}")
    elif isinstance(exc, rexc.ResponseError):
        error = StoreError(f"event store refused a command: {exc}")
    elif isinstance(exc, rexc.RedisError):
        error = StoreError(f"event store error: {exc}")
    else:
        return exc  # not the client's: a bug, passed on as it is
    error.__cause__ = exc
    return error


@contextlib.contextmanager
def _translate_errors() -> Iterator[None]:
    """Raise the store's own error classes instead of redis-py and socket exceptions."""
    try:
        yield
    except _CLIENT_ERRORS as exc:
        raise _translated(exc) from exc


def _pack_fields(fields: Mapping[str, Any]) -> list[Any]:
    flat: list[Any] = []
    for name, value in fields.items():
        if not isinstance(name, str):
            raise TypeError(f"metadata field names must be str, got {name!r}")
        flat += [name, msgpack.packb(value, use_bin_type=True)]
    return flat


def _unpack_fields(raw: Mapping[bytes, bytes]) -> dict[str, Any]:
    return {name.decode(): msgpack.unpackb(value, raw=False) for name, value in raw.items()}


class EventStore:
    """Append-only event streams in a Redis-protocol server (Redis 7+, Valkey 7+).

    Build it with ``await EventStore.connect(url)`` (which owns its client and closes it in
    :meth:`close`) or ``EventStore(redis_client)`` (the caller keeps ownership).
    ``upcasters`` is the registry applied to what :meth:`read`, :meth:`subscribe` and
    :meth:`read_many` return (:data:`events.codec.UPCASTERS` by default).

    With ``batch_appends`` (the default), the appends made in one event-loop turn go to the
    server as one pipeline of at most ``max_append_batch`` script calls
    (:mod:`events.batcher`); each keeps its own result and errors. ``batch_appends=False``
    sends each append on its own, for comparison. Use a store from one event loop.
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        *,
        owns_client: bool = False,
        upcasters: codec.Upcasters = codec.UPCASTERS,
        batch_appends: bool = True,
        max_append_batch: int = DEFAULT_MAX_APPEND_BATCH,
    ) -> None:
        self.redis = redis
        self._owns_client = owns_client
        self._upcasters = upcasters
        self._append_script = redis.register_script(_APPEND_LUA)
        self._create_script = redis.register_script(_CREATE_LUA)
        self._update_meta_script = redis.register_script(_UPDATE_META_LUA)
        self._batcher = (
            AppendBatcher(redis, self._append_script, max_batch=max_append_batch, translate=_translated)
            if batch_appends
            else None
        )

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        max_connections: int = 256,
        socket_timeout: float = 10.0,
        connect_timeout: float = 3.0,
        upcasters: codec.Upcasters = codec.UPCASTERS,
        batch_appends: bool = True,
        max_append_batch: int = DEFAULT_MAX_APPEND_BATCH,
    ) -> EventStore:
        """A store on its own connection pool to ``url`` (``redis://``, ``rediss://``, ``unix://``).

        The pool waits for a free connection rather than failing when ``max_connections`` are busy.
        One retry with a short backoff rides over a connection the server closed (a restart);
        after that, :class:`StoreUnavailable`. Nothing is sent until the first call.
        ``batch_appends`` and ``max_append_batch`` are the constructor's.
        """
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=socket_timeout,
            socket_timeout=socket_timeout,
            socket_connect_timeout=connect_timeout,
            retry=Retry(ExponentialBackoff(cap=0.2, base=0.05), retries=2),
        )
        return cls(
            aioredis.Redis.from_pool(pool),
            owns_client=True,
            upcasters=upcasters,
            batch_appends=batch_appends,
            max_append_batch=max_append_batch,
        )

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

    async def ping(self) -> None:
        """Return when the server answers; raise :class:`StoreUnavailable` otherwise."""
        with _translate_errors():
            await self.redis.ping()

    # --- games and their metadata ----------------------------------------------------------

    async def create_game(self, game_id: str, meta: Mapping[str, Any]) -> None:
        """Record a new game's metadata; :class:`GameExists` if the id has metadata or events.

        Values may be anything msgpack encodes (str, int, bool, None, bytes, lists, dicts) and
        come back from :meth:`get_meta` as they went in.
        """
        if not meta:
            raise ValueError("create_game needs at least one metadata field")
        keys = [meta_key(game_id), events_key(game_id)]
        with _translate_errors():
            created = await self._create_script(keys=keys, args=_pack_fields(meta))
        if not created:
            raise GameExists(game_id)

    async def get_meta(self, game_id: str) -> dict[str, Any] | None:
        """The game's metadata, or ``None`` when there is no such game."""
        with _translate_errors():
            raw = await self.redis.hgetall(meta_key(game_id))
        return _unpack_fields(raw) if raw else None

    async def update_meta(self, game_id: str, fields: Mapping[str, Any]) -> None:
        """Set some metadata fields of an existing game (:class:`UnknownGame` otherwise)."""
        if not fields:
            return
        with _translate_errors():
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
        args = [expected_version, command_id or "", *bodies]
        if self._batcher is not None:
            reply = await self._batcher.call(keys, args)  # raises the store's errors already
        else:
            with _translate_errors():
                reply = await self._append_script(keys=keys, args=args)
        outcome = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
        if outcome == "conflict":
            raise ConflictError(game_id, expected_version, int(reply[1]))
        return AppendResult(int(reply[1]), int(reply[2]), duplicate=outcome == "dup")

    async def command_result(self, game_id: str, command_id: str) -> AppendResult | None:
        """What an earlier append with ``command_id`` produced (``duplicate=True``), or ``None``.

        The same answer a repeated :meth:`append` would give, without deciding the command again.
        """
        with _translate_errors():
            done = await self.redis.hget(cmds_key(game_id), command_id)
        if done is None:
            return None
        first, _, last = done.decode().partition(",")
        return AppendResult(int(first), int(last), duplicate=True)

    # --- reading --------------------------------------------------------------------------

    async def version(self, game_id: str) -> int:
        """The version of the game's last event; 0 when the stream is empty or missing."""
        return (await self.head(game_id))[0]

    async def head(self, game_id: str) -> tuple[int, str]:
        """``(version, hash)`` of the last event; ``(0, GENESIS_HASH)`` for an empty stream."""
        with _translate_errors():
            last = await self.redis.xrevrange(events_key(game_id), "+", "-", count=1)
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
            with _translate_errors():
                page = await self.redis.xrange(key, start, end, count=_PAGE)
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
        block = max(1, min(block_ms, _MAX_BLOCK_MS))
        while True:
            with _translate_errors():
                reply = await self.redis.xread({key: codec.entry_id(next_version - 1)}, count=_PAGE, block=block)
            for _stream, entries in reply or ():
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
        """For each game id, the events after the version given (one XREAD over all the streams).

        Only games with new events appear in the result. With ``block_ms`` (> 0) and nothing new,
        waits up to that long for the first new event on any of them; ``None`` or 0 never waits.
        ``count`` caps the events returned per game. On Redis Cluster, call it per slot.
        """
        if not positions:
            return {}
        streams = {events_key(game_id): codec.entry_id(version) for game_id, version in positions.items()}
        games = {events_key(game_id).encode(): game_id for game_id in positions}
        deadline = None if not block_ms else time.monotonic() + block_ms / 1000
        while True:
            block = None
            if deadline is not None:
                remaining_ms = int((deadline - time.monotonic()) * 1000)
                block = max(1, min(remaining_ms, _MAX_BLOCK_MS))
            with _translate_errors():
                reply = await self.redis.xread(streams, count=count, block=block)
            if reply or deadline is None or time.monotonic() >= deadline:
                break
        return {
            games[stream]: [codec.decode_entry(e, f, upcasters=self._upcasters) for e, f in entries]
            for stream, entries in reply or ()
            if entries
        }

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

    async def set_status(self, game_id: str, status: str, score: float) -> None:
        """File the game under ``status`` in the lobby index (and out of its previous status).

        The status is also kept in the game's metadata as ``status``. ``score`` orders the
        listing (the creation time, say). Not atomic across the two keys: a crash in between
        leaves the game listed under both statuses until the next call.
        """
        with _translate_errors():
            old_raw = await self.redis.hget(meta_key(game_id), "status")
            old = msgpack.unpackb(old_raw, raw=False) if old_raw is not None else None
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hset(meta_key(game_id), "status", msgpack.packb(status, use_bin_type=True))
                pipe.zadd(lobby_key(status), {game_id: score})
                if isinstance(old, str) and old != status:
                    pipe.zrem(lobby_key(old), game_id)
                await pipe.execute()

    async def list_games(
        self, status: str, limit: int = 50, offset: int = 0, *, newest_first: bool = True
    ) -> list[str]:
        """Game ids filed under ``status``, highest score first (lowest first if not ``newest_first``)."""
        if limit <= 0:
            return []
        with _translate_errors():
            ids = await self.redis.zrange(lobby_key(status), offset, offset + limit - 1, desc=newest_first)
        return [i.decode() for i in ids]

    async def count_games(self, status: str) -> int:
        """How many games are filed under ``status``."""
        with _translate_errors():
            return int(await self.redis.zcard(lobby_key(status)))
