"""The due-bots index: which games have a bot seat owing a move, and since when.

A game whose last append left a bot owing a command is listed, scored by the time (ms) that
append was decided, in one of :data:`DUE_SHARDS` sorted sets ``donjon:due-bots:{<shard>}``
(``shard`` is the crc32 of the game id modulo the shard count): a
:class:`~events.sharded.ShardedIndex`, so on Redis Cluster the shards spread over the masters
and every command here touches one key. The index is how a node finds bot games nobody drives
after a full restart, without waiting for a request to load them (:mod:`service.bots.sweep`).

The index may list too much, never too little: an entry is added *before* the append that
leaves a bot owing (a crash in between leaves an entry for a game that owes nothing), and one is
removed only once the game is known to owe nothing, and only if nobody re-listed it meanwhile
(:meth:`DueBots.drop`, a compare-and-delete on the score): by the sweep, after reading the game,
or by the node that listed it for a lobby write, once that write is done and the game it
appended owes no bot move.

>>> due_key(3), shard_of("0123456789abcdef") in range(DUE_SHARDS)
('donjon:due-bots:{3}', True)
"""

from __future__ import annotations

import zlib

from events.server import Server
from events.sharded import ShardedIndex

__all__ = ["DUE_SHARDS", "DueBots", "due_key", "shard_of"]

DUE_SHARDS = 16
"""Shards of the index; fixed, because every node must agree on where a game is listed."""


def due_key(shard: int) -> str:
    """The sorted set of shard ``shard``: ``donjon:due-bots:{<shard>}``."""
    return f"donjon:due-bots:{{{shard}}}"


def shard_of(game_id: str) -> int:
    """The shard a game is listed in."""
    return zlib.crc32(game_id.encode()) % DUE_SHARDS


class DueBots:
    """The due-bots index on the store's server (``store.due_bots`` of
    :class:`events.store.EventStore`; :class:`events.protocol.DueBotsIndex` is what the service
    relies on)."""

    def __init__(self, server: Server) -> None:
        self.index = ShardedIndex(server, key=due_key, shard_of=shard_of, shards=DUE_SHARDS)
        self.redis = server.redis
        """The server's client, for tests that look at the index's keys themselves."""

    async def mark(self, game_id: str, since_ms: int) -> None:
        """List the game as owing a bot move since ``since_ms`` (an earlier listing is replaced)."""
        await self.index.add(game_id, since_ms)

    async def bump(self, game_id: str, since_ms: int) -> None:
        """Move a listed game's time forward to ``since_ms`` (it moved since); never backwards,
        never listing a game that is not listed."""
        await self.index.add(game_id, since_ms, only_listed=True, only_later=True)

    async def drop(self, game_id: str, since_ms: float) -> bool:
        """Unlist the game if it is still listed at ``since_ms`` (what the caller read); True if unlisted."""
        return await self.index.drop_if(game_id, since_ms)

    async def due(self, before_ms: int, limit: int) -> list[tuple[str, float]]:
        """Up to ``limit`` listed games with their times, those listed before ``before_ms``, oldest first."""
        return await self.index.below(before_ms, limit)

    async def count(self) -> int:
        """How many games are listed (tests and the bench)."""
        return await self.index.count()
