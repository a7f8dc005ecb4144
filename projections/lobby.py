"""The lobby projection: ``GET /games?status=open|active|finished``.

The lobby is a read model derived from each game's projection: one small entry per game (what a
lobby screen shows) kept in the game's meta under ``lobby``, and the game's id in the store's
per-status index (sorted sets by creation time, sharded by game id so no single key takes
every write: :meth:`events.protocol.Store.set_status`). The service records it after every
append that changes what the lobby shows (creation, a seat taken, the start, the end).

Recording is idempotent and crash-safe: the id goes into the new status's index first, then
the entry (with the version it describes; an older one never overwrites a newer) goes into
the meta, and only then does the id leave the old status's index. A crash between two steps
leaves the game listed under the status its entry names, and perhaps also under the other
one, where :func:`list_lobby` skips it (an entry shows only in the list of its own status).
If a node dies between an append and its lobby write, the next node to load that game from
the stream records it again: :func:`repair` checks the entry and the index membership.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from events.protocol import Store
from projections.delay import delayed
from projections.game import GameProjection, Status

__all__ = ["LOBBY_FIELD", "list_lobby", "lobby_entry", "needs_record", "record", "repair"]

LOBBY_FIELD = "lobby"
"""The meta field holding the JSON lobby entry."""
DELAYED = "delayed"
"""Stored beside an entry, never listed: the game has a spectator delay, so its listed version
stays the one recorded (the lobby shows no move of a delayed game)."""


def lobby_entry(projection: GameProjection) -> dict[str, Any]:
    """What the lobby shows of one game."""
    entry: dict[str, Any] = {
        "id": projection.game_id,
        "game": projection.game,
        "status": projection.status.value,
        "version": projection.version,
        "seats": projection.seats,
        "taken": projection.seats - len(projection.free_seats),
        "names": list(projection.names),
        "created": projection.created_ts,
    }
    if projection.has_bots:
        entry["bots"] = list(projection.bots)
    if projection.summary is not None:
        entry["summary"] = projection.summary
    return entry


def _lobby_shape(entry: dict[str, Any]) -> tuple[Any, Any, bool]:
    """The parts of an entry whose change must reach the lobby (not the version of every move)."""
    return (entry.get("status"), entry.get("names"), "summary" in entry)


def needs_record(meta: dict[str, Any] | None, projection: GameProjection) -> bool:
    """True when the stored entry is missing or shows an older status, seat list or result."""
    stored = _stored_entry(meta)
    if stored is None:
        return True
    return _lobby_shape(stored) != _lobby_shape(lobby_entry(projection)) and stored.get(
        "version", 0
    ) < projection.version


def _stored_entry(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    if not meta or LOBBY_FIELD not in meta:
        return None
    raw = meta[LOBBY_FIELD]
    if isinstance(raw, bytes):
        raw = raw.decode()
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


async def record(store: Store, projection: GameProjection) -> None:
    """Write the game's lobby entry and move it to its status's index (unless a newer entry is
    stored already)."""
    entry = json.dumps({**lobby_entry(projection), DELAYED: delayed(projection)}, separators=(",", ":"))
    await store.set_status(
        projection.game_id,
        projection.status.value,
        projection.created_ts,
        version=projection.version,
        fields={LOBBY_FIELD: entry},
    )


async def repair(store: Store, projection: GameProjection) -> bool:
    """Record the game again if its entry is missing or behind the stream, or the index of its
    status lacks it (a node died between an append and its lobby write); True if it did."""
    if needs_record(await store.get_meta(projection.game_id), projection) or not await store.is_filed(
        projection.game_id, projection.status.value
    ):
        await record(store, projection)
        return True
    return False


async def list_lobby(store: Store, status: Status, limit: int, offset: int) -> list[dict[str, Any]]:
    """Lobby entries of one status, oldest first (the index order). The page's games are read
    at once, not one after the other: a page of 50 costs about one round trip, not 100."""
    game_ids = await store.list_games(status.value, limit, offset)
    entries = await asyncio.gather(*(_entry_of(store, game_id, status) for game_id in game_ids))
    return [entry for entry in entries if entry is not None]


async def _entry_of(store: Store, game_id: str, status: Status) -> dict[str, Any] | None:
    entry = _stored_entry(await store.get_meta(game_id))
    if entry is None or entry.get("status") != status.value:
        return None  # moved on since the index was read
    return await _with_live_version(store, entry)


async def _with_live_version(store: Store, entry: dict[str, Any]) -> dict[str, Any]:
    """The entry with the game's version now: entries are written only when the lobby's shape
    changes, so the recorded version of a game in play lags its moves. A delayed game (or an
    entry from before the flag was stored) keeps the recorded one, which shows no move."""
    undelayed = entry.pop(DELAYED, True) is False
    if undelayed and entry.get("status") != Status.FINISHED.value:
        entry["version"] = max(int(entry.get("version", 0)), (await store.head(entry["id"]))[0])
    return entry
