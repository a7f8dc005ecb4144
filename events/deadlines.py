"""Turn-clock deadlines kept in the store, so that any node can fire them, also after a full restart.

One sorted set per shard, ``donjon:deadlines:{<shard>}`` (member: the game id, score: the
deadline in milliseconds since the epoch). The game id picks the shard (CRC-32 modulo
:data:`SHARDS`), and each shard's key is hash-tagged by its own name, so the sets spread over a
Redis Cluster like the games do instead of all living in one slot. A deadline is only a hint:
whoever finds it due folds the game and decides from the events whether a seat's time has run
out (``service.play.decisions.expired_seat``); a stale or early one costs one fold.

>>> shard_of("0123456789abcdef") in range(SHARDS)
True
>>> deadlines_key(3)
'donjon:deadlines:{3}'
"""

from __future__ import annotations

import zlib
from typing import Any

__all__ = ["SHARDS", "arm", "deadlines_key", "disarm", "due", "earliest", "shard_of"]

SHARDS = 16


def shard_of(game_id: str) -> int:
    return zlib.crc32(game_id.encode()) % SHARDS


def deadlines_key(shard: int) -> str:
    return f"donjon:deadlines:{{{shard}}}"


async def arm(store: Any, game_id: str, deadline_ms: int) -> None:
    """Record (or move) the game's next deadline."""
    async with store._call():
        await store.redis.zadd(deadlines_key(shard_of(game_id)), {game_id: deadline_ms})


async def disarm(store: Any, game_id: str) -> None:
    """The game has no running clock now (paused, finished, or no clock)."""
    async with store._call():
        await store.redis.zrem(deadlines_key(shard_of(game_id)), game_id)


async def due(store: Any, now_ms: int, limit: int = 100) -> list[str]:
    """Game ids whose deadline is at or before ``now_ms``, earliest first, across every shard."""
    found: list[tuple[float, str]] = []
    async with store._call(), store.redis.pipeline(transaction=False) as pipe:
        for shard in range(SHARDS):
            pipe.zrangebyscore(deadlines_key(shard), "-inf", now_ms, start=0, num=limit, withscores=True)
        replies = await pipe.execute()
    for reply in replies:
        found.extend((score, member.decode()) for member, score in reply)
    return [game_id for _, game_id in sorted(found)[:limit]]


async def earliest(store: Any) -> int | None:
    """The earliest deadline of any game, or ``None`` when no clock runs anywhere."""
    async with store._call(), store.redis.pipeline(transaction=False) as pipe:
        for shard in range(SHARDS):
            pipe.zrange(deadlines_key(shard), 0, 0, withscores=True)
        replies = await pipe.execute()
    scores = [int(score) for reply in replies for _member, score in reply]
    return min(scores) if scores else None
