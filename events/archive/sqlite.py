"""The archive in an SQLite file: the embedded default, no setup (``archive.sqlite3`` in the
data folder, beside the embedded Valkey's files).

The standard library's ``sqlite3`` on one connection, each call run in a worker thread so the
event loop never waits on the disk; WAL journaling, so the workers of one ``donjon serve``
(separate processes on the same file) read while one writes, and a busy timeout for their
writes. The schema and its steps are :mod:`events.archive.schema`'s, as in PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from events.archive.base import (
    FIRST,
    GAME_COLUMNS,
    SELECT_GAME,
    SELECT_LEDGER,
    ArchiveCounts,
    ArchivedGame,
    ArchiveSchemaError,
    ArchiveUnavailable,
    Entry,
    Hook,
    LedgerRow,
    Position,
    copy_checks,
    entries_of_rows,
    game_of_row,
    game_row,
    ledger_of_row,
    stored_rows,
)
from events.archive.schema import PRUNED_SINCE, SCHEMA_VERSION, VERSION_TABLE, schema_message, steps_after

__all__ = ["FILE_NAME", "SqliteArchive"]

FILE_NAME = "archive.sqlite3"
T = TypeVar("T")


class SqliteArchive:
    """:class:`events.archive.base.Archive` in one SQLite file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._lock = asyncio.Lock()

    @property
    def where(self) -> str:
        return f"sqlite:{self.path}"

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a commit survives a killed process
            db.create_function("decode", 2, _decode, deterministic=True)
            self._db = db
        return self._db

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        async with self._lock:
            try:
                return await asyncio.to_thread(lambda: work(self._connect()))
            except sqlite3.OperationalError as exc:
                raise ArchiveUnavailable(f"OperationalError: the archive at {self.where}: {exc}") from exc

    async def schema_version(self) -> int:
        return await self._run(_version)

    async def check(self) -> None:
        found = await self.schema_version()
        if found != SCHEMA_VERSION:
            raise ArchiveSchemaError(schema_message(found, self.where))

    async def migrate(self) -> tuple[int, int]:
        return await self._run(_migrate)

    async def put(self, games: Sequence[ArchivedGame], during: Hook | None = None) -> set[str]:
        if not games:
            return set()
        rows = [stored_rows(game)[0] for game in games]  # ValueError before anything is written
        loop = asyncio.get_running_loop()

        def write(db: sqlite3.Connection) -> set[str]:
            now = int(time.time() * 1000)
            with _transaction(db):
                for game in games:
                    _delete_game(db, game.game_id)
                marks = ", ".join("?" * len(GAME_COLUMNS))
                db.executemany(f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) VALUES ({marks})",
                               [game_row(game, now) for game in games])
                if during is not None:
                    asyncio.run_coroutine_threadsafe(during(), loop).result()
                db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", itertools.chain.from_iterable(rows))
                checked = {game.game_id for game in games if copy_checks(_entries(db, game.game_id), game)}
                for game in games:
                    if game.game_id not in checked:
                        _delete_game(db, game.game_id)
            return checked

        return await self._run(write)

    async def entries(self, game_id: str, from_version: int = 1, to_version: int | None = None) -> list[Entry]:
        last = to_version if to_version is not None else 2**31 - 1
        return await self._run(lambda db: _entries(db, game_id, from_version, last))

    async def entries_of(self, game_ids: Sequence[str]) -> dict[str, list[Entry]]:
        return await self._run(lambda db: {game_id: _entries(db, game_id) for game_id in game_ids})

    async def game(self, game_id: str) -> ArchivedGame | None:
        def read(db: sqlite3.Connection) -> ArchivedGame | None:
            row = db.execute(SELECT_GAME + " WHERE game_id = ?", (game_id,)).fetchone()
            return None if row is None else game_of_row(row)

        return await self._run(read)

    async def listed(self, status: str, limit: int, offset: int, newest_first: bool) -> list[tuple[str, float]]:
        order = "DESC" if newest_first else "ASC"

        def read(db: sqlite3.Connection) -> list[tuple[str, float]]:
            rows = db.execute(
                f"SELECT game_id, score FROM games WHERE status = ? ORDER BY score {order}, game_id {order}"
                " LIMIT ? OFFSET ?",
                (status, limit, offset),
            ).fetchall()
            return [(str(game_id), float(score)) for game_id, score in rows]

        return await self._run(read)

    async def counts(self) -> ArchiveCounts:
        def read(db: sqlite3.Connection) -> ArchiveCounts:
            version = _version(db)
            if version == 0:
                return ArchiveCounts(0, 0, 0)
            games = db.execute("SELECT count(*) FROM games").fetchone()[0]
            events = db.execute("SELECT count(*) FROM events").fetchone()[0]
            ledger = db.execute("SELECT count(*) FROM ledger").fetchone()[0] if version >= 2 else 0
            pruned = db.execute("SELECT count(pruned_ms) FROM games").fetchone()[0] if version >= PRUNED_SINCE else 0
            return ArchiveCounts(int(games), int(events), version, int(ledger), int(pruned))

        return await self._run(read)

    async def prunable(self, finished_before_ms: int, limit: int, after: Position = FIRST) -> list[ArchivedGame]:
        def read(db: sqlite3.Connection) -> list[ArchivedGame]:
            rows = db.execute(SELECT_GAME + " WHERE pruned_ms IS NULL AND finished_ms < ?"
                              " AND (finished_ms, game_id) > (?, ?) ORDER BY finished_ms, game_id LIMIT ?",
                              (finished_before_ms, *after, limit))
            return [game_of_row(row) for row in rows.fetchall()]

        return await self._run(read)

    async def prune(self, game_id: str, version: int, export_ref: str, now_ms: int) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            with _transaction(db):
                marked = db.execute("UPDATE games SET pruned_ms = ?, export_ref = ? WHERE game_id = ? AND version = ?"
                                    " AND pruned_ms IS NULL", (now_ms, export_ref, game_id, version)).rowcount
                if marked:
                    db.execute("DELETE FROM events WHERE game_id = ?", (game_id,))
            return bool(marked)

        return await self._run(write)

    async def put_ledger(self, rows: Sequence[LedgerRow]) -> None:
        if not rows:
            return

        def write(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.executemany("INSERT OR IGNORE INTO ledger (position, game_id, entry, prev_hash, hash, indexed)"
                               " VALUES (?, ?, ?, ?, ?, ?)", [(*row[:5], int(row[5])) for row in rows])

        await self._run(write)

    async def ledger_rows(self, start: int, limit: int) -> list[LedgerRow]:
        def read(db: sqlite3.Connection) -> list[LedgerRow]:
            rows = db.execute(SELECT_LEDGER + " WHERE position >= ? ORDER BY position LIMIT ?", (start, limit))
            return [ledger_of_row(row) for row in rows.fetchall()]

        return await self._run(read)

    async def ledger_rows_at(self, positions: Sequence[int]) -> list[LedgerRow]:
        wanted = list(positions)
        if not wanted:
            return []

        def read(db: sqlite3.Connection) -> list[LedgerRow]:
            marks = ", ".join("?" * len(wanted))
            rows = db.execute(SELECT_LEDGER + f" WHERE position IN ({marks}) ORDER BY position", wanted)
            return [ledger_of_row(row) for row in rows.fetchall()]

        return await self._run(read)

    async def ledger_position(self, game_id: str) -> int | None:
        def read(db: sqlite3.Connection) -> int | None:
            row = db.execute("SELECT position FROM ledger WHERE game_id = ? AND indexed = 1 ORDER BY position LIMIT 1",
                             (game_id,)).fetchone()
            return None if row is None else int(row[0])

        return await self._run(read)

    async def close(self) -> None:
        async with self._lock:
            db, self._db = self._db, None
            if db is not None:
                await asyncio.to_thread(db.close)


def _entries(db: sqlite3.Connection, game_id: str, first: int = 1, last: int = 2**31 - 1) -> list[Entry]:
    rows = db.execute(
        "SELECT version, body, prev_hash, hash FROM events WHERE game_id = ? AND version BETWEEN ? AND ?"
        " ORDER BY version",
        (game_id, first - 1, last),  # the row before the first gives its link
    )
    return entries_of_rows(rows, first)


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, the database's write lock taken at its start (``BEGIN IMMEDIATE``):
    committed when the block ends, rolled back when it raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _delete_game(db: sqlite3.Connection, game_id: str) -> None:
    db.execute("DELETE FROM events WHERE game_id = ?", (game_id,))
    db.execute("DELETE FROM games WHERE game_id = ?", (game_id,))


def _decode(text: str, encoding: str) -> bytes:
    """PostgreSQL's ``decode(text, 'hex')``, which schema step 3 uses (SQLite before 3.41 has no
    ``unhex``): a text that is not hex fails the statement."""
    if encoding != "hex":
        raise ValueError(f"decode: no encoding {encoding!r}")
    return bytes.fromhex(text)


def _version(db: sqlite3.Connection) -> int:
    db.execute(VERSION_TABLE)
    value = db.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    return int(value or 0)


def _migrate(db: sqlite3.Connection) -> tuple[int, int]:
    with _transaction(db):  # one migrating process at a time; the version re-read under the lock
        before = _version(db)
        for number, statements in steps_after(before, "BLOB"):
            for statement in statements:
                db.execute(statement)
            db.execute("DELETE FROM schema_version")
            db.execute("INSERT INTO schema_version VALUES (?)", (number,))
    return before, max(before, SCHEMA_VERSION)
