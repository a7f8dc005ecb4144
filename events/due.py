"""The due-bots index: which games have a bot seat owing a move, and since when.

A game whose last append left a bot owing a command is listed, scored by the time (ms) that
append was decided, in one of :data:`DUE_SHARDS` sorted sets ``donjon:due-bots:{<shard>}``
(``shard`` is the crc32 of the game id modulo the shard count). Each key carries its own hash
tag, so on Redis Cluster the shards spread over the masters and every command here touches one
key. The index is how a node finds bot games nobody drives after a full restart, without waiting
for a request to load them (:mod:`service.bots.sweep`).

The index may list too much, never too little: an entry is added *before* the append that
leaves a bot owing (a crash in between leaves an entry for a game that owes nothing), and one is
removed only once the game is known to owe nothing, and only if nobody re-listed it meanwhile
(:meth:`DueBots.drop`, a compare-and-delete on the score): by the sweep, after reading the game,
or by the node that listed it for a lobby write, once that write is done and the game it
appended owes no bot move.
"""

from __future__ import annotations

import zlib
from typing import cast

from events.store import EventStore

__all__ = ["DUE_SHARDS", "DueBots", "due_key"]

DUE_SHARDS = 16
"""Shards of the index; fixed, because every node must agree on where a game is listed."""

_DROP_LUA = """#!lua
local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call("ZREM", KEYS[1], ARGV[1]) end
return 0
"""


def due_key(shard: int) -> str:
    """The sorted set of shard ``shard``: ``donjon:due-bots:{<shard>}``."""
    return f"donjon:due-bots:{{{shard}}}"


def shard_of(game_id: str) -> int:
    """The shard a game is listed in."""
    return zlib.crc32(game_id.encode()) % DUE_SHARDS


class DueBots:
    """The due-bots index on the store's client (:class:`events.store.EventStore`)."""

    def __init__(self, store: EventStore) -> None:
        self._store = store  # its calls, hence their budget and error translation, are the store's
        self.redis = store.redis
        self._drop = self.redis.register_script(_DROP_LUA)

    async def mark(self, game_id: str, since_ms: int) -> None:
        """List the game as owing a bot move since ``since_ms`` (an earlier listing is replaced)."""
        async with self._store._call():
            await self.redis.zadd(due_key(shard_of(game_id)), {game_id: since_ms})

    async def bump(self, game_id: str, since_ms: int) -> None:
        """Move a listed game's time forward to ``since_ms`` (it moved since); never backwards,
        never listing a game that is not listed."""
        async with self._store._call():
            await self.redis.zadd(due_key(shard_of(game_id)), {game_id: since_ms}, xx=True, gt=True)

    async def drop(self, game_id: str, since_ms: float) -> bool:
        """Unlist the game if it is still listed at ``since_ms`` (what the caller read); True if unlisted."""
        async with self._store._call():
            return bool(await self._drop(keys=[due_key(shard_of(game_id))], args=[game_id, repr(float(since_ms))]))

    async def due(self, before_ms: int, limit: int) -> list[tuple[str, float]]:
        """Up to ``limit`` listed games with their times, those listed before ``before_ms``, oldest first."""
        found: list[tuple[str, float]] = []
        async with self._store._call():
            for shard in range(DUE_SHARDS):
                reply = await self.redis.zrangebyscore(
                    due_key(shard), "-inf", before_ms, start=0, num=limit, withscores=True
                )
                # redis-py types the reply for every client set-up; the store's client answers bytes.
                rows = cast("list[tuple[bytes, float]]", reply)
                found += [(game_id.decode(), float(score)) for game_id, score in rows]
        found.sort(key=lambda row: row[1])
        return found[:limit]

    async def count(self) -> int:
        """How many games are listed (tests and the bench)."""
        async with self._store._call():
            return sum([int(await self.redis.zcard(due_key(shard))) for shard in range(DUE_SHARDS)])
