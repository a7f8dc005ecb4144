"""A game's metadata: created once with the game, read, and updated field by field.

``game:{ID}:meta`` is a hash whose every value is msgpack-encoded, so ints, lists and bytes come
back from :meth:`Metadata.get_meta` as they went in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack

from events.errors import GameExists, UnknownGame
from events.keys import cmds_key, events_key, meta_key
from events.server import Script, Server
from events.store.replies import as_fields

__all__ = ["Metadata", "pack_fields", "unpack_fields"]

# The creation of a game: KEYS[1] meta, KEYS[2] events, KEYS[3] cmds. Besides the meta it makes
# the (empty) stream and the command-id hash (with the field "", never a command id), so every
# key of the append script exists from the start: in a slot that is being migrated, a script
# whose keys exist only in part is answered TRYAGAIN until the move completes.
CREATE_LUA = """#!lua
if redis.call("EXISTS", KEYS[1]) == 1 or redis.call("XLEN", KEYS[2]) > 0 then return 0 end
redis.call("HSET", KEYS[1], unpack(ARGV))
if redis.call("EXISTS", KEYS[2]) == 0 then
  redis.call("XADD", KEYS[2], "0-1", "made", "1")
  redis.call("XDEL", KEYS[2], "0-1")
end
redis.call("HSET", KEYS[3], "", "0,0")
return 1
"""

UPDATE_META_LUA = """#!lua
if redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
redis.call("HSET", KEYS[1], unpack(ARGV))
return 1
"""


def pack_fields(fields: Mapping[str, Any]) -> list[Any]:
    """``fields`` as the flat ``name, msgpack value, ...`` list HSET takes.

    >>> pack_fields({"game": "castle"})
    ['game', b'\\xa6castle']
    """
    flat: list[Any] = []
    for name, value in fields.items():
        if not isinstance(name, str):
            raise TypeError(f"metadata field names must be str, got {name!r}")
        flat += [name, msgpack.packb(value, use_bin_type=True)]
    return flat


def unpack_fields(raw: Mapping[bytes, bytes]) -> dict[str, Any]:
    return {name.decode(): msgpack.unpackb(value, raw=False) for name, value in raw.items()}


class Metadata:
    """The metadata part of :class:`events.store.EventStore`."""

    server: Server
    _create_script: Script
    _update_meta_script: Script

    async def create_game(self, game_id: str, meta: Mapping[str, Any]) -> None:
        """Record a new game's metadata; :class:`GameExists` if the id has metadata or events.

        Values may be anything msgpack encodes (str, int, bool, None, bytes, lists, dicts) and
        come back from :meth:`get_meta` as they went in.
        """
        if not meta:
            raise ValueError("create_game needs at least one metadata field")
        keys = [meta_key(game_id), events_key(game_id), cmds_key(game_id)]
        if not await self._create_script(keys=keys, args=pack_fields(meta)):
            raise GameExists(game_id)

    async def get_meta(self, game_id: str) -> dict[str, Any] | None:
        """The game's metadata, or ``None`` when there is no such game."""
        async with self.server.call():
            raw = as_fields(await self.server.redis.hgetall(meta_key(game_id)))
        return unpack_fields(raw) if raw else None

    async def update_meta(self, game_id: str, fields: Mapping[str, Any]) -> None:
        """Set some metadata fields of an existing game (:class:`UnknownGame` otherwise)."""
        if not fields:
            return
        if not await self._update_meta_script(keys=[meta_key(game_id)], args=pack_fields(fields)):
            raise UnknownGame(game_id)
