"""Reading streams: one game's history, following it, many games at once, and append notices.

An entry id *is* the version (``7-0`` is version 7), so "from version N" is a plain XRANGE and
"after version N" an XREAD. On Redis Cluster, a read over many games goes one XRANGE per game in
a pipeline the client splits by master (a multi-key XREAD across slots is refused there).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import msgpack

from events import codec
from events.chain import verify_bodies
from events.envelope import GENESIS_HASH, Envelope
from events.errors import StoreError
from events.keys import events_key
from events.server import Server
from events.store.replies import Entry, as_entries, as_streams

__all__ = ["MAX_BLOCK_MS", "Reading", "block_cap_ms"]

_PAGE = 1000
"""Events per XRANGE/XREAD round trip when reading history."""

MAX_BLOCK_MS = 5000
"""Longest single XREAD BLOCK; longer waits loop. A store whose client has a socket timeout
blocks at most half of it per round trip (:func:`block_cap_ms`), so the timeout never fires on
a wait, only on a server that does not answer."""

_CLUSTER_POLL_S = 0.02
"""On a cluster, a blocking :meth:`Reading.read_many` over several slots polls this often."""


def block_cap_ms(server: Server) -> int:
    """The longest XREAD BLOCK that stays well under the client's socket timeout."""
    timeout = server.connection_settings().get("socket_timeout")
    if not timeout:
        return MAX_BLOCK_MS
    return max(1, min(MAX_BLOCK_MS, int(timeout * 1000 / 2)))


class Reading:
    """The reading part of :class:`events.store.EventStore`."""

    server: Server
    _upcasters: codec.Upcasters
    _max_block_ms: int

    async def version(self, game_id: str) -> int:
        """The version of the game's last event; 0 when the stream is empty or missing."""
        return (await self.head(game_id))[0]

    async def head(self, game_id: str) -> tuple[int, str]:
        """``(version, hash)`` of the last event; ``(0, GENESIS_HASH)`` for an empty stream."""
        async with self.server.call():
            last = as_entries(await self.server.redis.xrevrange(events_key(game_id), "+", "-", count=1))
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

    async def _raw_range(self, game_id: str, from_version: int, to_version: int | None) -> AsyncIterator[Entry]:
        key = events_key(game_id)
        start = codec.entry_id(max(from_version, 1))
        end = "+" if to_version is None else codec.entry_id(to_version)
        while True:
            async with self.server.call():
                page = as_entries(await self.server.redis.xrange(key, start, end, count=_PAGE))
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
            async with self.server.call():
                reply = await self.server.redis.xread(
                    {key: codec.entry_id(next_version - 1)}, count=_PAGE, block=block
                )
            for _stream, entries in as_streams(reply):
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
            if self.server.cluster:
                got = await self._read_each(positions, count)
            else:
                got = await self._read_together(positions, count, block)
            if got or deadline is None or time.monotonic() >= deadline:
                return got
            if self.server.cluster:
                await asyncio.sleep(min(_CLUSTER_POLL_S, max(0.0, deadline - time.monotonic())))

    async def _read_together(
        self, positions: Mapping[str, int], count: int | None, block: int | None
    ) -> dict[str, list[Envelope]]:
        streams = {events_key(game_id): codec.entry_id(version) for game_id, version in positions.items()}
        games = {events_key(game_id).encode(): game_id for game_id in positions}
        async with self.server.call():
            reply = await self.server.redis.xread(streams, count=count, block=block)
        return {games[stream]: self._decoded(entries) for stream, entries in as_streams(reply) if entries}

    async def _read_each(self, positions: Mapping[str, int], count: int | None) -> dict[str, list[Envelope]]:
        # XRANGE from the next version's id, not XREAD after the last one: redis-py's cluster
        # client finds XREAD's keys by asking the server (``COMMAND GETKEYS``, one round trip
        # per command while it builds the pipeline: ~10 ms for 60 games on an idle machine, and
        # the node's reader stalled ~200 ms behind every safety-net poll under load), while
        # XRANGE's key is its first argument. Ids are ``<version>-0``, so the two read the same.
        order = list(positions)
        async with self.server.call(), self.server.redis.pipeline(transaction=False) as pipe:
            for game_id in order:
                pipe.xrange(events_key(game_id), min=codec.entry_id(positions[game_id] + 1), max="+", count=count)
            replies: list[Any] = await pipe.execute()
        return {game_id: self._decoded(entries) for game_id, entries in zip(order, replies, strict=True) if entries}

    def decode_notice(self, game_id: str, payload: bytes, shown_head: str | None = None) -> list[Envelope] | None:
        """The events an append notice (``game:{ID}:live``) carries, as :meth:`read` returns them;
        empty when it carries only the new version, or anything that is not this game's;
        ``None``, decoding no event, when its last event's chain hash is ``shown_head``: the
        watcher has shown that event already (most often its node's own append, pushed as it
        landed), and a hash names one history."""
        try:
            carried = msgpack.unpackb(payload, raw=True)
            if not isinstance(carried, list):
                return []
            if shown_head and _last_hash(carried) == shown_head.encode():
                return None
            envelopes = [
                codec.decode_body(body, prev.decode(), hash_.decode(), upcasters=self._upcasters)
                for body, prev, hash_ in carried
            ]
        except (ValueError, TypeError, IndexError, StoreError, msgpack.UnpackException):
            return []
        return envelopes if all(envelope.game_id == game_id for envelope in envelopes) else []

    @staticmethod
    def notice_ends_at(payload: bytes, head: str) -> bool:
        """True when an append notice's last event has the chain hash ``head``: cheap (no event
        decoded), for the feed to drop on arrival a notice the watcher has shown already."""
        try:
            carried = msgpack.unpackb(payload, raw=True)
            return isinstance(carried, list) and _last_hash(carried) == head.encode()
        except (ValueError, TypeError, IndexError, msgpack.UnpackException):
            return False

    def _decoded(self, entries: Sequence[Entry]) -> list[Envelope]:
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


def _last_hash(carried: list[Any]) -> bytes | None:
    """The chain hash of a notice's last entry (``[body, prev, hash]``), ``None`` when it has none."""
    return carried[-1][2] if carried else None
