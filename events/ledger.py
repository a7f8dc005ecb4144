"""The public ledger: every game created, in creation order, in one hash chain (issue 22).

One stream, ``donjon:ledger:{ledger}``, holds an entry per game, its stream id ``<position>-0``
(positions 1, 2, ...), with the fields ``entry`` (the entry's canonical JSON), ``prev_hash`` and
``hash``; the hash ``donjon:ledger:{ledger}:games`` maps each game id to its position. Both keys
carry the hash tag ``{ledger}``, so on Redis Cluster they live in one slot and the append script
that writes both stays atomic.

An entry is ``{"position", "id", "game", "options", "seed_commitment", "created"}`` (the public
options only; ``created`` in ms since the epoch) and its hash is::

    hash = hex(sha256(ascii_hex(prev_hash) || canonical_json(entry)))

with ``prev_hash`` the previous entry's hash (64 zeros before the first) and canonical JSON as
the exports' signatures use it (sorted keys, no spaces, UTF-8). Lua in Redis has no SHA-256, so
the node computes the hash on top of the head it read and the script appends only when that is
still the head (and the game has no entry yet); another node that appended first makes the node
try again on the head the refusal names (:meth:`Ledger.record`).

Entries may move to the archive of finished games (:mod:`events.archive.ledger`: those of games
no longer in the live store, never the head); with the archive attached (:attr:`Ledger.archive`)
every read here answers the same entries, the same bytes, from wherever each one is.

>>> ledger_key(), games_key()
('donjon:ledger:{ledger}', 'donjon:ledger:{ledger}:games')
>>> entry_hash(GENESIS, {"position": 1, "id": "g"})[:16]
'0219eee6123160ef'
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from events.errors import StoreError, StoreUnavailable
from events.server import Script, Server

__all__ = [
    "GENESIS",
    "Ledger",
    "LedgerArchive",
    "LedgerEntry",
    "canonical_json",
    "entry_hash",
    "games_key",
    "ledger_key",
]

GENESIS = "0" * 64
"""The ``prev_hash`` of the first entry."""
_ATTEMPTS = 50
"""Appends tried when other nodes keep appending first (each retry reads the new head)."""

# KEYS[1] the stream, KEYS[2] game id -> position; ARGV: game id, position, prev_hash, hash, entry.
_APPEND_LUA = """#!lua
local known = redis.call("HGET", KEYS[2], ARGV[1])
if known then return {"known", known} end
local last = redis.call("XREVRANGE", KEYS[1], "+", "-", "COUNT", 1)
local position, head = "0", ARGV[6]
if #last > 0 then
  position = string.match(last[1][1], "^(%d+)")
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == "hash" then head = fields[i + 1] end
  end
end
if tonumber(position) + 1 ~= tonumber(ARGV[2]) or head ~= ARGV[3] then
  return {"moved", position, head}
end
redis.call("XADD", KEYS[1], ARGV[2] .. "-0", "entry", ARGV[5], "prev_hash", ARGV[3], "hash", ARGV[4])
redis.call("HSET", KEYS[2], ARGV[1], ARGV[2])
return {"added", ARGV[2]}
"""


def ledger_key() -> str:
    """The ledger's stream: ``donjon:ledger:{ledger}``."""
    return "donjon:ledger:{ledger}"


def games_key() -> str:
    """Game id -> position, in the ledger's slot: ``donjon:ledger:{ledger}:games``."""
    return "donjon:ledger:{ledger}:games"


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: the bytes a hash or a signature covers."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def entry_hash(prev_hash: str, entry: Mapping[str, Any]) -> str:
    """The hash of ``entry`` (without its ``prev_hash`` and ``hash``) linked to ``prev_hash``."""
    fields = {name: value for name, value in entry.items() if name not in ("prev_hash", "hash")}
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_json(fields)).hexdigest()


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One entry as stored: its fields, the previous entry's hash and its own."""

    fields: dict[str, Any]
    prev_hash: str
    hash: str

    @property
    def position(self) -> int:
        return int(self.fields["position"])

    def as_dict(self) -> dict[str, Any]:
        """The entry as ``GET /ledger`` shows it."""
        return {**self.fields, "prev_hash": self.prev_hash, "hash": self.hash}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _entry_of(row: Any) -> LedgerEntry:
    """A stream row ``(id, {field: value})`` as an entry."""
    fields = {_text(name): _text(value) for name, value in row[1].items()}
    return LedgerEntry(json.loads(fields["entry"]), fields["prev_hash"], fields["hash"])


def entry_of_row(row: Sequence[Any]) -> LedgerEntry:
    """An archived row ``(position, game id, entry JSON, prev_hash, hash, ...)`` as an entry."""
    return LedgerEntry(json.loads(row[2]), str(row[3]), str(row[4]))


class LedgerArchive(Protocol):
    """What the ledger reads of an archive (:class:`events.archive.base.Archive` has it)."""

    async def ledger_rows(self, start: int, limit: int) -> Sequence[Sequence[Any]]: ...

    async def ledger_position(self, game_id: str) -> int | None: ...


def _from_start(entries: Sequence[LedgerEntry], start: int) -> bool:
    """Whether live ``entries`` (a page from ``start``) are the whole answer: they begin at
    ``start`` with no gap, so no archived entry falls among them (and none lies past the head,
    which never moves)."""
    if not entries or entries[0].position != start:
        return False
    return entries[-1].position - start == len(entries) - 1


class Ledger:
    """The ledger on the store's server (:class:`events.server.Server`: its budget, its errors)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.archive: LedgerArchive | None = None
        """Where moved entries are (``None``: every entry is live)."""
        self._append: Script | None = None
        self._lock = asyncio.Lock()
        self._head: tuple[int, str] | None = None
        """The head this node last saw (its own append, or the one a refused append named)."""

    async def record(self, game_id: str, fields: Mapping[str, Any], *, new_id: bool = False) -> LedgerEntry:
        """Append the entry of a new game (``fields`` without ``position``); the entry, or the
        game's earlier entry when it has one already (a retried creation, or a game re-dealt
        under its id, whose first entry then stands against the new deal's commitment).
        ``new_id``: the id was drawn at random for this creation and its meta stored first, so
        it can have no earlier entry, and the archive is not asked (a lookup in another
        database, for every game created).

        A node appends one entry at a time (its own creations would only race each other for
        the head), so only other nodes can make an append retry: each refusal names the new head.
        An earlier entry moved to the archive is looked up there first: the append script sees
        the live index only (an entry moves only once its game has no live key, and is copied
        before it leaves, so a creation, which stores the meta first, never misses it)."""
        archived = None if new_id else await self._archived_entry(game_id)
        if archived is not None:
            return archived
        async with self._lock:
            head = self._head or await self.head()
            for attempt in range(_ATTEMPTS):
                outcome, entry, head = await self._try_append(game_id, fields, head)
                if entry is not None:
                    return entry
                if outcome == "known":
                    raise StoreError(f"ledger: game {game_id!r} is indexed at a position the ledger lacks")
                await asyncio.sleep(random.random() * 0.001 * min(attempt, 20))
        raise StoreError("ledger: other nodes kept appending first; the entry was not recorded")

    async def _archived_entry(self, game_id: str) -> LedgerEntry | None:
        """The game's entry in the archive, if it has one there. An archive that does not answer
        does not stop a creation (a new game's id is new; only a game re-dealt under its id while
        the archive is down would get a second entry, which the ledger then shows)."""
        if self.archive is None:
            return None
        try:
            position = await self.archive.ledger_position(game_id)
            return None if position is None else await self.entry_at(position)
        except StoreUnavailable:
            return None

    async def _try_append(
        self, game_id: str, fields: Mapping[str, Any], head: tuple[int, str]
    ) -> tuple[str, LedgerEntry | None, tuple[int, str]]:
        """One append on top of ``head``: the script's outcome, the entry (``None`` when another
        node appended first) and the head to try on next."""
        position, prev_hash = head
        entry = {**fields, "id": game_id, "position": position + 1}
        digest = entry_hash(prev_hash, entry)
        reply = await self._script()(
            [ledger_key(), games_key()],
            [game_id, position + 1, prev_hash, digest, canonical_json(entry).decode(), GENESIS],
        )
        outcome = _text(reply[0])
        if outcome == "added":
            self._head = (position + 1, digest)
            return outcome, LedgerEntry(entry, prev_hash, digest), self._head
        if outcome == "known":
            return outcome, await self.entry_at(int(_text(reply[1]))), head
        self._head = (int(_text(reply[1])), _text(reply[2]))
        return outcome, None, self._head

    async def head(self) -> tuple[int, str]:
        """``(position, hash)`` of the last entry; ``(0, GENESIS)`` for an empty ledger."""
        async with self.server.call():
            rows = await self.server.redis.xrevrange(ledger_key(), "+", "-", count=1)
        if not rows:
            return 0, GENESIS
        last = _entry_of(rows[0])
        return last.position, last.hash

    async def page(self, start: int, limit: int) -> list[LedgerEntry]:
        """Up to ``limit`` entries from position ``start`` on, in order: the live ones, merged
        with the archived ones unless the live ones run from ``start`` without a gap (an entry
        in both, while it moves, is the same entry)."""
        start = max(start, 1)
        async with self.server.call():
            rows = await self.server.redis.xrange(ledger_key(), f"{start}-0", "+", count=limit)
        live = [_entry_of(row) for row in rows]
        if self.archive is None or _from_start(live, start):
            return live
        merged = {entry.position: entry for entry in map(entry_of_row, await self.archive.ledger_rows(start, limit))}
        merged.update((entry.position, entry) for entry in live)
        return [merged[position] for position in sorted(merged)[:limit]]

    async def entry_at(self, position: int) -> LedgerEntry | None:
        """The entry at ``position``, if there is one."""
        entries = await self.page(position, 1)
        return entries[0] if entries and entries[0].position == position else None

    async def position_of(self, game_id: str) -> int | None:
        """Where the game's entry is, ``None`` when it has none."""
        async with self.server.call():
            position = await self.server.redis.hget(games_key(), game_id)
        if position is not None:
            return int(_text(position))
        return None if self.archive is None else await self.archive.ledger_position(game_id)

    def _script(self) -> Script:
        if self._append is None:
            self._append = self.server.script(_APPEND_LUA)
        return self._append
