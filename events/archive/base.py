"""What an archive of finished games holds and answers, whatever database keeps it.

A game leaves the live store (Valkey) only once an archive holds all of it: its metadata hash
and command-id hash exactly as stored (field name -> stored bytes), and every event as the chain
covers it (``version, body, prev_hash, hash``). :class:`ArchivedGame` is that record;
:class:`Archive` is the protocol the two backends fill (:mod:`events.archive.postgres` on
asyncpg, :mod:`events.archive.sqlite` on the standard library), so the archiver and the reading
store never know which one they talk to.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import msgpack

from events.chain import ALGORITHMS, chain_of_body, genesis
from events.errors import StoreError, StoreUnavailable

__all__ = [
    "Archive",
    "ArchiveSchemaError",
    "ArchiveUnavailable",
    "ArchivedGame",
    "ArchiveCounts",
    "GamePruned",
    "GAME_COLUMNS",
    "SELECT_GAME",
    "game_of_row",
    "game_row",
    "Entry",
    "LedgerRow",
    "SELECT_LEDGER",
    "ledger_of_row",
    "Hook",
    "Position",
    "FIRST",
    "chain_head",
    "linked_head",
    "pack_hash",
    "unpack_hash",
]

LedgerRow = tuple[int, str, str, str, str, bool]
"""One entry of the public ledger as the archive keeps it: ``(position, game id, entry's
canonical JSON, prev_hash, hash, indexed)`` (``indexed``: the live game index named it)."""

SELECT_LEDGER = "SELECT position, game_id, entry, prev_hash, hash, indexed FROM ledger"
"""A ledger row as :func:`ledger_of_row` reads it (both backends)."""


def ledger_of_row(row: Sequence[object]) -> LedgerRow:
    """A row of :data:`SELECT_LEDGER` (``indexed`` stored as 0/1) as a :data:`LedgerRow`."""
    position, game_id, entry, prev_hash, hash_, indexed = row
    return (int(position), str(game_id), str(entry), str(prev_hash), str(hash_), bool(indexed))  # type: ignore[call-overload]


Entry = tuple[int, bytes, str, str]
"""One stored event: ``(version, body, prev_hash, hash)``, the bytes the chain covers."""

Position = tuple[int, str]
"""Where a prune's scan of the archive is: the last ``(finished_ms, game_id)`` it was given."""
FIRST: Position = (-1, "")
"""Before every game."""

Hook = Callable[[], Coroutine[Any, Any, None]]
"""Called inside a write, before it commits (the crash tests' fault point ``copy``)."""


class ArchiveUnavailable(StoreUnavailable):
    """The archive's database cannot be reached (refused, reset, timed out): a read of an
    archived game answers ``store_unavailable``, and the archiver tries again on its next pass."""


class ArchiveSchemaError(StoreError):
    """The archive's schema is not the version this donjon reads (run ``donjon archive migrate``)."""


class GamePruned(StoreError):
    """A read of a game's events, or a write to it, after ``donjon archive prune`` deleted them:
    its ``games`` row is kept, and its signed export is at ``export_ref``. The service answers
    ``game_pruned`` (HTTP 410) with that place, never a game that looks empty or unknown."""

    def __init__(self, game_id: str, export_ref: str, pruned_ms: int) -> None:
        super().__init__(f"game {game_id!r} was pruned from the archive (at {pruned_ms} ms since the epoch):"
                         f" its signed export is at {export_ref}")
        self.game_id = game_id
        self.export_ref = export_ref
        self.pruned_ms = pruned_ms


@dataclass(frozen=True, slots=True)
class ArchivedGame:
    """Everything the live store held of one game, as it held it."""

    game_id: str
    game: str
    status: str
    score: float
    """The lobby score (the creation time), so archived games list in the lobby's order."""
    finished_ms: int
    """The time of the game's last event."""
    meta: Mapping[str, bytes]
    cmds: Mapping[str, bytes]
    version: int
    """The last event's version."""
    head: str
    """The last event's hash: the chain head."""
    entries: Sequence[Entry] = ()
    """Every event; empty in what :meth:`Archive.game` returns."""
    pruned_ms: int | None = None
    """When ``donjon archive prune`` deleted its events (``None``: it has them)."""
    export_ref: str | None = None
    """Where its signed export went, once pruned (a URI: ``file:///...``)."""

    def check_not_pruned(self) -> None:
        """:class:`GamePruned` if the archive holds only this record of the game, no event."""
        if self.pruned_ms is not None:
            raise GamePruned(self.game_id, self.export_ref or "?", self.pruned_ms)


@dataclass(frozen=True, slots=True)
class ArchiveCounts:
    """What ``donjon archive status`` prints of the archive itself."""

    games: int
    events: int
    schema_version: int
    ledger: int = 0
    """Ledger entries moved to the archive."""
    pruned: int = 0
    """Games whose events ``donjon archive prune`` deleted (counted in ``games``: their rows stay)."""


GAME_COLUMNS = ("game_id", "game", "status", "score", "version", "head", "finished_ms", "archived_ms", "meta", "cmds")
SELECT_GAME = ("SELECT game_id, game, status, score, version, head, finished_ms, meta, cmds, pruned_ms, export_ref"
               " FROM games")
"""A game's row as :func:`game_of_row` reads it (both backends)."""


def game_row(game: ArchivedGame, now_ms: int) -> tuple[object, ...]:
    """The ``games`` row of ``game`` (in :data:`GAME_COLUMNS` order), archived at ``now_ms``."""
    return (game.game_id, game.game, game.status, float(game.score), game.version, game.head,
            game.finished_ms, now_ms, pack_hash(game.meta), pack_hash(game.cmds))


def game_of_row(row: Sequence[object]) -> ArchivedGame:
    """The record (without events) of a row of :data:`SELECT_GAME`."""
    game_id, game, status, score, version, head, finished_ms, meta, cmds, pruned_ms, export_ref = row
    return ArchivedGame(
        game_id=str(game_id), game=str(game), status=str(status), score=float(score),  # type: ignore[arg-type]
        finished_ms=int(finished_ms), version=int(version), head=str(head),  # type: ignore[call-overload]
        meta=unpack_hash(bytes(meta)), cmds=unpack_hash(bytes(cmds)),  # type: ignore[call-overload]
        pruned_ms=None if pruned_ms is None else int(pruned_ms),  # type: ignore[call-overload]
        export_ref=None if export_ref is None else str(export_ref),
    )


def chain_head(entries: Sequence[Entry]) -> str | None:
    """The head the chain of ``entries`` recomputes to (each ``hash == H(prev_hash + body)``, each
    ``prev_hash`` the hash before, versions 1, 2, ...), ``None`` where it breaks. Bodies are not
    decoded (the first one only, for the algorithm): this is the archiver's check of each copy."""
    if not entries:
        return None
    algorithm = ALGORITHMS[chain_of_body(entries[0][1])]
    prev = genesis(chain_of_body(entries[0][1]))
    for expected, (version, body, prev_hash, hash_) in enumerate(entries, start=1):
        if version != expected or prev_hash != prev or algorithm(prev_hash.encode("ascii") + body).hexdigest() != hash_:
            return None
        prev = hash_
    return prev


def linked_head(versions: Sequence[int], prevs: str, hashes: str, width: int) -> str | None:
    """The head of a chain read back as each row's version, and its ``prev_hash`` and ``hash``
    each run together in one string (hashes of ``width`` hex digits, the three in one same order
    of the rows, any order), ``None`` unless the versions are 1, 2, ... and each ``prev_hash`` is
    the hash before (the genesis first). Whether each row's hash is that of its own body is the
    caller's check (PostgreSQL recomputes it where the rows are)."""
    count = len(versions)
    if not count or len(prevs) != width * count or len(hashes) != width * count:
        return None
    if list(versions) != list(range(1, count + 1)):  # rows out of order: put them in order
        order = sorted(range(count), key=versions.__getitem__)
        if [versions[index] for index in order] != list(range(1, count + 1)):
            return None
        prevs, hashes = (_reordered(joined, order, width) for joined in (prevs, hashes))
    # In version order: prev 1 is the genesis, and prevs 2..n run as hashes 1..n-1 do.
    if prevs[:width] != "0" * width or prevs[width:] != hashes[:-width]:
        return None
    return hashes[-width:]


def _reordered(joined: str, order: Sequence[int], width: int) -> str:
    return "".join(joined[index * width:(index + 1) * width] for index in order)


def pack_hash(fields: Mapping[str, bytes]) -> bytes:
    """A stored hash (field -> bytes) as one msgpack blob, the way the archive keeps it."""
    packed: bytes = msgpack.packb(dict(fields), use_bin_type=True)
    return packed


def unpack_hash(blob: bytes) -> dict[str, bytes]:
    fields = msgpack.unpackb(blob, raw=False)
    return {str(name): bytes(value) for name, value in fields.items()}


@runtime_checkable
class Archive(Protocol):
    """An archive backend. Every call raises :class:`ArchiveUnavailable` when the database
    cannot be reached, never the driver's own exceptions."""

    @property
    def where(self) -> str:
        """Where it is, for logs and ``donjon archive status`` (no password)."""
        ...

    async def migrate(self) -> tuple[int, int]:
        """Bring the schema to :data:`events.archive.schema.SCHEMA_VERSION`; ``(before, after)``."""
        ...

    async def schema_version(self) -> int: ...

    async def check(self) -> None:
        """:class:`ArchiveSchemaError` unless the schema is the version this code reads."""
        ...

    async def put(self, games: Sequence[ArchivedGame], during: Hook | None = None) -> None:
        """Write ``games`` in one transaction (a game archived before is replaced whole)."""
        ...

    async def entries(self, game_id: str, from_version: int = 1, to_version: int | None = None) -> list[Entry]: ...

    async def entries_of(self, game_ids: Sequence[str]) -> dict[str, list[Entry]]: ...

    async def chain_heads(self, game_ids: Sequence[str]) -> dict[str, tuple[int, str | None]]:
        """For each game, how many events the archive holds and the head their chain recomputes
        to from the stored rows (``None`` where it breaks): the archiver's check of a copy."""
        ...

    async def game(self, game_id: str) -> ArchivedGame | None:
        """The game's record without its events (``entries`` empty), or ``None``."""
        ...

    async def listed(self, status: str, limit: int, offset: int, newest_first: bool) -> list[tuple[str, float]]:
        """``(game id, score)`` of the archived games of ``status``, in the lobby's order."""
        ...

    async def counts(self) -> ArchiveCounts: ...

    async def prunable(self, finished_before_ms: int, limit: int, after: Position = FIRST) -> list[ArchivedGame]:
        """Up to ``limit`` records (no events) of the games not pruned yet whose last event is
        before ``finished_before_ms``, in ``(finished_ms, game_id)`` order from just ``after`` on."""
        ...

    async def prune(self, game_id: str, version: int, export_ref: str, now_ms: int) -> bool:
        """In one transaction, delete the game's events and mark its row pruned at ``now_ms``
        with ``export_ref``; only if the row is still unpruned at ``version`` (a game archived
        again meanwhile is not the one exported). True when it did."""
        ...

    async def put_ledger(self, rows: Sequence[LedgerRow]) -> None:
        """Write ledger entries in one transaction; a position held already is left as it is
        (an entry never changes, and two nodes may move the same one)."""
        ...

    async def ledger_rows(self, start: int, limit: int) -> list[LedgerRow]:
        """Up to ``limit`` archived ledger entries from position ``start`` on, in order."""
        ...

    async def ledger_rows_at(self, positions: Sequence[int]) -> list[LedgerRow]:
        """The archived ledger entries at ``positions`` (those it holds), in order."""
        ...

    async def ledger_position(self, game_id: str) -> int | None:
        """The position the live game index named for the game, among the archived entries."""
        ...

    async def close(self) -> None: ...
