"""What an archive of finished games holds and answers, whatever database keeps it.

A game leaves the live store (Valkey) only once an archive holds all of it: its metadata hash
and command-id hash exactly as stored (field name -> stored bytes), and every event as the chain
covers it (``version, body, prev_hash, hash``). :class:`ArchivedGame` is that record;
:class:`Archive` is the protocol the two backends fill (:mod:`events.archive.postgres` on
asyncpg, :mod:`events.archive.sqlite` on the standard library), so the archiver and the reading
store never know which one they talk to.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
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
    "copy_checks",
    "EVENT_COLUMNS",
    "StoredRow",
    "entries_of_rows",
    "storable",
    "stored_rows",
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


def copy_checks(copy: Sequence[Entry], game: ArchivedGame) -> bool:
    """Whether entries read back from the archive re-chain (:func:`chain_head`) to ``game``'s
    head, as many as it has: the check of a copy where the database does not hash it itself."""
    return len(copy) == len(game.entries) and chain_head(copy) == game.head


StoredRow = tuple[str, int, bytes, bytes | None, bytes]
"""An ``events`` row as written (schema version 4): ``(game id, version, body, prev_hash, hash)``,
each hash its raw bytes, and ``prev_hash`` ``None`` when it is the hash of the row before (the
genesis for version 1): every row of a chain that links, so the column holds only breaks."""

EVENT_COLUMNS = ("game_id", "version", "body", "prev_hash", "hash")


def storable(entries: Sequence[Entry]) -> bool:
    """Whether the archive can keep ``entries`` byte for byte: every hash and ``prev_hash``
    lowercase hex of one width (the hex is rebuilt from the raw bytes on the way out). Every
    chain the store writes is."""
    return not entries or _raw_hashes(entries) is not None


def _raw_hashes(entries: Sequence[Entry]) -> bytes | None:
    """Every hash's raw bytes run together (version order), ``None`` unless :func:`storable`. A
    chain whose every ``prev_hash`` is the hash before (from the genesis) needs only its hashes
    looked at; any other, its ``prev_hash`` column too."""
    _, _, prevs, hashes = zip(*entries, strict=True)
    width = len(hashes[0])
    raw = _lower_hex(hashes, width)
    if raw is None or _links(prevs, hashes) or _lower_hex(prevs, width) is not None:
        return raw
    return None


def _links(prevs: Sequence[str], hashes: Sequence[str]) -> bool:
    """Whether each ``prev_hash`` is the hash before, the first the genesis."""
    return prevs[0] == "0" * len(hashes[0]) and prevs[1:] == hashes[:-1]


def _lower_hex(column: Sequence[str], width: int) -> bytes | None:
    """The raw bytes of ``column`` run together, ``None`` unless each is lowercase hex of ``width``."""
    joined = "".join(column)
    if width <= 0 or set(map(len, column)) != {width}:
        return None
    try:
        raw = bytes.fromhex(joined)
    except ValueError:
        return None
    return raw if raw.hex() == joined else None


def stored_rows(game: ArchivedGame) -> tuple[Iterator[StoredRow], bytes]:
    """The ``events`` rows of ``game`` (:data:`StoredRow`), and every hash's raw bytes run
    together (what PostgreSQL checks the copy against); ``ValueError`` unless :func:`storable`.
    A chain that links from the genesis (every one the store writes) stores no ``prev_hash`` at
    all, and is sent with no Python frame per row (zip and slices)."""
    entries = game.entries
    if not entries:
        return iter(()), b""
    raw = _raw_hashes(entries)
    if raw is None:
        raise ValueError(f"game {game.game_id}: its hashes are not lowercase hex of one width")
    versions, bodies, prevs, hashes = zip(*entries, strict=True)
    links: Iterator[bytes | None] = itertools.repeat(None)
    if not _links(prevs, hashes):
        links = (None if prev == _implied_prev(version, len(hash_), before) else bytes.fromhex(prev)
                 for (version, _, prev, hash_), before in zip(entries, _befores(entries), strict=True))
    width = len(raw) // len(entries)
    digests = [raw[start:start + width] for start in range(0, len(raw), width)]
    return zip(itertools.repeat(game.game_id), versions, bodies, links, digests, strict=False), raw


def _befores(entries: Sequence[Entry]) -> Iterator[tuple[int, str] | None]:
    """For each entry, ``(version, hash)`` of the one before it (``None`` for the first)."""
    return itertools.chain([None], ((version, hash_) for version, _, _, hash_ in entries[:-1]))


def _implied_prev(version: int, width: int, before: tuple[int, str] | None) -> str | None:
    """The ``prev_hash`` a row of ``version`` stores no ``prev_hash`` for, as a reader derives it:
    the genesis (``width`` zeros) for version 1, the hash of the row ``before`` when that is the
    version before; else none (such a row's ``prev_hash`` is stored)."""
    if version == 1:
        return "0" * width
    if before is not None and before[0] == version - 1:
        return before[1]
    return None


def entries_of_rows(rows: Iterable[Sequence[Any]], first_version: int = 1) -> list[Entry]:
    """The entries of stored rows ``(version, body, prev_hash, hash)`` of one game in version
    order, from ``first_version`` on (a row before it, when read, gives the first one's link):
    the hex of each hash as the live store held it, a ``prev_hash`` not stored being the hash of
    the version before (the genesis for version 1). Rows that run version by version with no
    break stored (every archived game's) are read column by column, with no Python frame per row."""
    rows = list(rows)
    if not rows:
        return []
    versions, bodies, prevs, raws = zip(*rows, strict=True)
    start, count = versions[0], len(rows)
    if prevs.count(None) == count and versions == tuple(range(start, start + count)):
        digests = list(map(bytes.hex, map(bytes, raws)))
        if start == first_version == 1:
            links = ["0" * len(digests[0]), *digests[:-1]]
            return list(zip(versions, map(bytes, bodies), links, digests, strict=True))
        if start == first_version - 1:  # the row before the first, for its link
            return list(zip(versions[1:], map(bytes, bodies[1:]), digests[:-1], digests[1:], strict=True))
    return _entries_row_by_row(rows, first_version)


def _entries_row_by_row(rows: Iterable[Sequence[Any]], first_version: int) -> list[Entry]:
    """:func:`entries_of_rows` for rows with a stored break or a version missing."""
    entries: list[Entry] = []
    before: tuple[int, str] | None = None
    for version, body, prev, hash_ in rows:
        digest = bytes(hash_).hex()
        if version >= first_version:  # a row before is read only for the first one's link
            entries.append((version, bytes(body), _link(version, prev, digest, before), digest))
        before = (version, digest)
    return entries


def _link(version: int, prev: bytes | None, digest: str, before: tuple[int, str] | None) -> str:
    """A row's ``prev_hash``: stored (a break), else the genesis or the hash of the version before."""
    if prev is not None:
        return bytes(prev).hex()
    implied = _implied_prev(version, len(digest), before)
    if implied is None:
        raise StoreError(f"the archive's event {version} links to an event it does not hold")
    return implied


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

    async def put(self, games: Sequence[ArchivedGame], during: Hook | None = None) -> set[str]:
        """Write ``games`` in one transaction (a game archived before is replaced whole) and check
        each copy in it, before it commits: the ids of the games whose archived rows, re-hashed
        from their stored bytes (each ``hash == H(prev_hash + body)``, each ``prev_hash`` the
        hash before, versions 1, 2, ... from the genesis), give the game's own hashes and head,
        as many as it has. A game whose copy does not check is not kept (its rows are deleted in
        the same transaction); one whose hashes are not :func:`storable` is refused
        (``ValueError``, nothing written)."""
        ...

    async def entries(self, game_id: str, from_version: int = 1, to_version: int | None = None) -> list[Entry]: ...

    async def entries_of(self, game_ids: Sequence[str]) -> dict[str, list[Entry]]: ...

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
