"""Turn-clock deadlines kept in the store, so that any node can fire them, also after a full restart.

One sorted set per shard, ``donjon:deadlines:{<shard>}`` (member: the game id, score: the
deadline in milliseconds since the epoch): a :class:`~events.sharded.ShardedIndex`. The game id
picks the shard (CRC-32 modulo :data:`SHARDS`), and each shard's key is hash-tagged by its own
name, so the sets spread over a Redis Cluster like the games do instead of all living in one
slot. A deadline is only a hint: whoever finds it due folds the game and decides from the events
whether a seat's time has run out (``service.play.decisions.expired_seat``); a stale or early one
costs one fold.

:class:`Deadlines` is the index (``store.deadlines``); the functions below are the same calls
on a store's index, as the clock keeper makes them.

>>> shard_of("0123456789abcdef") in range(SHARDS)
True
>>> deadlines_key(3)
'donjon:deadlines:{3}'
"""

from __future__ import annotations

import zlib

from events.protocol import Store
from events.server import Server
from events.sharded import ShardedIndex

__all__ = ["SHARDS", "Deadlines", "arm", "deadlines_key", "disarm", "due", "earliest", "shard_of"]

SHARDS = 16


def shard_of(game_id: str) -> int:
    return zlib.crc32(game_id.encode()) % SHARDS


def deadlines_key(shard: int) -> str:
    return f"donjon:deadlines:{{{shard}}}"


class Deadlines:
    """The deadlines index on the store's server (:class:`events.protocol.DeadlineIndex`)."""

    def __init__(self, server: Server) -> None:
        self.index = ShardedIndex(server, key=deadlines_key, shard_of=shard_of, shards=SHARDS)

    async def arm(self, game_id: str, deadline_ms: int) -> None:
        """Record (or move) the game's next deadline."""
        await self.index.add(game_id, deadline_ms)

    async def disarm(self, game_id: str) -> None:
        """The game has no running clock now (paused, finished, or no clock)."""
        await self.index.remove(game_id)

    async def due(self, now_ms: int, limit: int = 100) -> list[str]:
        """Game ids whose deadline is at or before ``now_ms``, earliest first, across every shard."""
        return [game_id for game_id, _ in await self.index.below(now_ms, limit)]

    async def earliest(self) -> int | None:
        """The earliest deadline of any game, or ``None`` when no clock runs anywhere."""
        lowest = await self.index.lowest()
        return None if lowest is None else int(lowest)


async def arm(store: Store, game_id: str, deadline_ms: int) -> None:
    """Record (or move) the game's next deadline."""
    await store.deadlines.arm(game_id, deadline_ms)


async def disarm(store: Store, game_id: str) -> None:
    """The game has no running clock now (paused, finished, or no clock)."""
    await store.deadlines.disarm(game_id)


async def due(store: Store, now_ms: int, limit: int = 100) -> list[str]:
    """Game ids whose deadline is at or before ``now_ms``, earliest first, across every shard."""
    return await store.deadlines.due(now_ms, limit)


async def earliest(store: Store) -> int | None:
    """The earliest deadline of any game, or ``None`` when no clock runs anywhere."""
    return await store.deadlines.earliest()
