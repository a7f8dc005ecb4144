"""The lobby index: each status's games in a :class:`~events.sharded.ShardedIndex`, and the
status itself in the game's metadata.

Shard ``n`` of a status is ``donjon:lobby:<status>:{lobby-<n>}`` (the game's shard is the CRC-16
of its id, mod 16); the unsharded ``donjon:lobby:<status>`` of earlier versions is still read by
listings and cleared on status changes, never added to (:mod:`events.keys`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack

from events.errors import UnknownGame
from events.keys import LOBBY_SHARDS, lobby_key, lobby_shard, meta_key
from events.server import Script, Server
from events.sharded import ShardedIndex
from events.store.meta import pack_fields
from events.store.replies import outcome

__all__ = ["Lobby", "lobby_index"]

# The status write of the lobby: KEYS[1] the meta hash, ARGV[1] the msgpack-encoded status,
# ARGV[2] the version it describes (0: no version check), ARGV[3] "1" to refuse a game with no
# meta (``{"unknown", ""}``: its keys may be in the archive only), ARGV[4..] more field/value
# pairs. Refuses (``{"stale", old}``) a write older than the one stored, so crossing writers of
# two nodes leave the newest; returns ``{"ok", old}`` with the status it replaced ("" for none).
FILE_STATUS_LUA = """#!lua
if ARGV[3] == "1" and redis.call("EXISTS", KEYS[1]) == 0 then return {"unknown", ""} end
local old = redis.call("HGET", KEYS[1], "status") or ""
local version = tonumber(ARGV[2])
if version > 0 then
  local stored = redis.call("HGET", KEYS[1], "status_version")
  if stored and cmsgpack.unpack(stored) > version then return {"stale", old} end
end
redis.call("HSET", KEYS[1], "status", ARGV[1], unpack(ARGV, 4))
if version > 0 then redis.call("HSET", KEYS[1], "status_version", cmsgpack.pack(version)) end
return {"ok", old}
"""


def lobby_index(server: Server, status: str) -> ShardedIndex:
    """The sorted sets of the games filed under ``status``: its shards and its unsharded set."""
    return ShardedIndex(
        server,
        key=lambda shard: lobby_key(status, shard),
        shard_of=lobby_shard,
        shards=LOBBY_SHARDS,
        legacy=lobby_key(status),
    )


class Lobby:
    """The lobby part of :class:`events.store.EventStore`."""

    server: Server
    _file_status_script: Script
    _lobbies: dict[str, ShardedIndex]

    def _lobby(self, status: str) -> ShardedIndex:
        index = self._lobbies.get(status)
        if index is None:
            index = self._lobbies[status] = lobby_index(self.server, status)
        return index

    async def set_status(
        self,
        game_id: str,
        status: str,
        score: float,
        *,
        version: int = 0,
        fields: Mapping[str, Any] | None = None,
        only_live: bool = False,
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
        nothing in the metadata changes), so two nodes' crossing writes keep the newest. With
        ``only_live``, a game with no metadata is :class:`UnknownGame` and its metadata is not
        written (it may be in the archive only; its lobby entry may be added already, which the
        caller's write after restoring it repeats).
        """
        packed = pack_fields(fields or {})
        async with self.server.call():  # one budget for the three steps
            await self._lobby(status).add(game_id, score)
            reply = await self._file_status_script(
                keys=[meta_key(game_id)],
                args=[msgpack.packb(status, use_bin_type=True), int(version), int(only_live), *packed],
            )
            answer = outcome(reply)
            if answer == "unknown":
                raise UnknownGame(game_id)
            filed = answer == "ok"
            old = msgpack.unpackb(reply[1], raw=False) if reply[1] else None
            if filed and isinstance(old, str) and old != status:
                await self._lobby(old).remove(game_id)
        return filed

    async def is_filed(self, game_id: str, status: str) -> bool:
        """True when the game is in ``status``'s lobby index (its shard, or the unsharded set)."""
        return await self._lobby(status).score(game_id) is not None

    async def list_games(
        self, status: str, limit: int = 50, offset: int = 0, *, newest_first: bool = True
    ) -> list[str]:
        """Game ids filed under ``status``, highest score first (lowest first if not ``newest_first``).

        Reads the first ``offset + limit`` of every shard (one pipeline) and merges them; an id
        found twice counts once."""
        return await self._lobby(status).ranked(limit, offset, highest_first=newest_first)

    async def count_games(self, status: str) -> int:
        """How many games are filed under ``status`` (a game left in the unsharded set and a
        shard by a crash counts twice)."""
        return await self._lobby(status).count()
