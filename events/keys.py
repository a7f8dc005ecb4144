"""Where a game lives in Redis: the names of its keys and of its append channel.

``{ID}`` in every name is a cluster hash tag, so everything of one game lives in one slot and
the append script stays atomic on Redis Cluster. Names only: nothing here talks to a server, so
the store, its feed and its indexes share them without importing each other.

>>> events_key("g1"), meta_key("g1"), cmds_key("g1"), live_channel("g1")
('game:{g1}:events', 'game:{g1}:meta', 'game:{g1}:cmds', 'game:{g1}:live')
>>> game_of_channel(b"game:{g1}:live")
'g1'
>>> lobby_key("open", 3), lobby_key("open")
('donjon:lobby:open:{lobby-3}', 'donjon:lobby:open')
"""

from __future__ import annotations

from redis.crc import key_slot

__all__ = [
    "LOBBY_SHARDS",
    "archive_lease_key",
    "check_game_id",
    "cmds_key",
    "events_key",
    "game_of_channel",
    "live_channel",
    "lobby_key",
    "lobby_keys",
    "lobby_shard",
    "meta_key",
]

LOBBY_SHARDS = 16
"""Sorted sets per lobby status; a game's shard is fixed by its id (CRC-16 of the id, mod 16)."""


def check_game_id(game_id: str) -> str:
    """``game_id`` itself; :class:`ValueError` for one that is empty, not a str or has braces
    (a brace would break the hash tag)."""
    if not isinstance(game_id, str) or not game_id or "{" in game_id or "}" in game_id:
        raise ValueError(f"game id must be a non-empty str without braces, got {game_id!r}")
    return game_id


def events_key(game_id: str) -> str:
    """The stream key of a game: ``game:{ID}:events``."""
    return f"game:{{{check_game_id(game_id)}}}:events"


def meta_key(game_id: str) -> str:
    """The metadata hash key of a game: ``game:{ID}:meta``."""
    return f"game:{{{check_game_id(game_id)}}}:meta"


def cmds_key(game_id: str) -> str:
    """The applied-command-ids hash key of a game: ``game:{ID}:cmds``."""
    return f"game:{{{check_game_id(game_id)}}}:cmds"


def live_channel(game_id: str) -> str:
    """The sharded pub/sub channel the append script announces new versions on: ``game:{ID}:live``."""
    return f"game:{{{check_game_id(game_id)}}}:live"


def archive_lease_key(game_id: str) -> str:
    """The lease a node holds while it archives a game (:mod:`events.archive.archiver`):
    ``game:{ID}:archiving``, in the game's slot so the archiver's delete checks it atomically."""
    return f"game:{{{check_game_id(game_id)}}}:archiving"


def game_of_channel(channel: bytes | str) -> str:
    """The game id of a :func:`live_channel` name."""
    name = channel.decode() if isinstance(channel, bytes) else channel
    return name[name.index("{") + 1 : name.index("}")]


def lobby_shard(game_id: str) -> int:
    """Which of the :data:`LOBBY_SHARDS` sorted sets of a status holds ``game_id``."""
    return key_slot(check_game_id(game_id).encode()) % LOBBY_SHARDS


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
