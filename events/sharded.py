"""A sorted set of game ids split into shards, each its own key: the store's indexes.

The lobby (one per status), the due-bots index and the turn-clock deadlines are one idea: game
ids scored by a time, spread over a fixed number of sorted sets so that on Redis Cluster they
spread over the masters (each shard's key carries its own hash tag) and no command touches two
keys. :class:`ShardedIndex` is that idea once: where a member goes (``shard_of``), what the
shards are called (``key``), and the few reads and writes the indexes need, each over every
shard in one pipeline where it reads them all. A ``legacy`` key (the lobby's unsharded set of
earlier versions) is read and cleared beside the shards, never added to.

>>> index = ShardedIndex(None, key=lambda n: f"donjon:demo:{{{n}}}", shard_of=len, shards=4)
>>> index.key_of("abcde"), index.every_key()
('donjon:demo:{1}', ['donjon:demo:{0}', 'donjon:demo:{1}', 'donjon:demo:{2}', 'donjon:demo:{3}'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from events.server import Script, Server

__all__ = ["ShardedIndex"]

# The compare-and-delete: KEYS[1] the shard, ARGV[1] the member, ARGV[2] the score it must have.
_DROP_IF_LUA = """#!lua
local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call("ZREM", KEYS[1], ARGV[1]) end
return 0
"""

_Rows = list[tuple[bytes, float]]
"""A ``WITHSCORES`` reply: redis-py types it for every client set-up; the store's answers bytes."""


class ShardedIndex:
    """Game ids scored by a number, in ``shards`` sorted sets ``key(0) .. key(shards - 1)``.

    ``server`` is the :class:`~events.server.Server` every call goes through (its budget, its
    errors); ``shard_of`` maps a member to its shard and must never change, since every node
    must agree on where a game is listed.
    """

    def __init__(
        self,
        server: Server,
        *,
        key: Callable[[int], str],
        shard_of: Callable[[str], int],
        shards: int = 16,
        legacy: str | None = None,
    ) -> None:
        self.server = server
        self._key = key
        self._shard_of = shard_of
        self.shards = shards
        self.legacy = legacy
        self._drop_if: Script | None = None

    def key_of(self, member: str) -> str:
        """The shard key that holds ``member``."""
        return self._key(self._shard_of(member) % self.shards)

    def every_key(self) -> list[str]:
        """Every key a listing reads: the shards in order, then the legacy key if any."""
        return [self._key(shard) for shard in range(self.shards)] + ([self.legacy] if self.legacy else [])

    async def add(self, member: str, score: float, *, only_listed: bool = False, only_later: bool = False) -> None:
        """List ``member`` at ``score`` (an earlier listing is replaced). ``only_listed``: never
        list a member that is not listed; ``only_later``: never move a score backwards."""
        async with self.server.call():
            await self.server.redis.zadd(self.key_of(member), {member: score}, xx=only_listed, gt=only_later)

    async def remove(self, member: str) -> None:
        """Unlist ``member`` (from its shard and from the legacy key, in one round trip)."""
        async with self.server.call():
            if not self.legacy:
                await self.server.redis.zrem(self.key_of(member), member)
                return
            async with self.server.redis.pipeline(transaction=False) as pipe:
                pipe.zrem(self.key_of(member), member)
                pipe.zrem(self.legacy, member)
                await pipe.execute()

    async def drop_if(self, member: str, score: float) -> bool:
        """Unlist ``member`` only if it is still listed at ``score``; True if it was unlisted."""
        if self._drop_if is None:  # registered at first use: most indexes never drop this way
            self._drop_if = self.server.script(_DROP_IF_LUA)
        return bool(await self._drop_if(keys=[self.key_of(member)], args=[member, repr(float(score))]))

    async def score(self, member: str) -> float | None:
        """``member``'s score (its shard's, else the legacy key's), ``None`` when not listed."""
        async with self.server.call():
            found = await self.server.redis.zscore(self.key_of(member), member)
            if found is None and self.legacy:
                found = await self.server.redis.zscore(self.legacy, member)
        return None if found is None else float(found)

    async def _each_shard(self, read: Callable[[Any, str], object]) -> list[Any]:
        """``read(pipe, key)`` for every key of :meth:`every_key`, one pipeline; the replies in order."""
        async with self.server.call(), self.server.redis.pipeline(transaction=False) as pipe:
            for key in self.every_key():
                read(pipe, key)
            return cast("list[Any]", await pipe.execute())

    async def below(self, max_score: float, limit: int) -> list[tuple[str, float]]:
        """Up to ``limit`` members scored at most ``max_score``, lowest score first (ties by id)."""
        replies = await self._each_shard(
            lambda pipe, key: pipe.zrangebyscore(key, "-inf", max_score, start=0, num=limit, withscores=True)
        )
        found = [(member.decode(), float(score)) for rows in replies for member, score in cast(_Rows, rows)]
        found.sort(key=lambda row: (row[1], row[0]))
        return found[:limit]

    async def ranked(self, limit: int, offset: int = 0, *, highest_first: bool = True) -> list[str]:
        """Members ``offset`` to ``offset + limit`` of the merged ranking, highest score first (lowest
        first if not ``highest_first``). Reads the first ``offset + limit`` of every key; a member
        found under two keys counts once, at its best score."""
        return [member for member, _ in await self.ranked_scored(limit, offset, highest_first=highest_first)]

    async def ranked_scored(
        self, limit: int, offset: int = 0, *, highest_first: bool = True
    ) -> list[tuple[str, float]]:
        """:meth:`ranked` with each member's score (the archive merges its own listing with it)."""
        if limit <= 0:
            return []
        wanted = offset + limit
        replies = await self._each_shard(
            lambda pipe, key: pipe.zrange(key, 0, wanted - 1, desc=highest_first, withscores=True)
        )
        pick = max if highest_first else min
        best: dict[bytes, float] = {}
        for rows in replies:
            for member, score in cast(_Rows, rows):
                best[member] = score if member not in best else pick(best[member], score)
        ranking = sorted(best.items(), key=lambda item: (item[1], item[0]), reverse=highest_first)
        return [(member.decode(), float(score)) for member, score in ranking[offset:wanted]]

    async def lowest(self) -> float | None:
        """The lowest score of any member (shards and legacy key), ``None`` when they are all empty."""
        replies = await self._each_shard(lambda pipe, key: pipe.zrange(key, 0, 0, withscores=True))
        scores = [float(score) for rows in replies for _member, score in cast(_Rows, rows)]
        return min(scores) if scores else None

    async def count(self) -> int:
        """How many members every key holds together (one listed under two keys counts twice)."""
        return sum(int(n) for n in await self._each_shard(lambda pipe, key: pipe.zcard(key)))
