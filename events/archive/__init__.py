"""The archive of finished games: where a game's data goes once it is over and cold.

A finished game (``DONJON_ARCHIVE_AFTER_S`` after its last event) is copied whole (its metadata
and command-id hashes as stored, every event as the chain covers it) into an archive, the copy
is read back and its chain head recomputed and compared with the live one, and only then are
the game's keys removed from the live store; reads of it go to the archive from then on,
transparently (:class:`events.archive.reading.ArchivingStore`), with the same bytes.

- :mod:`events.archive.base`: the record and the :class:`~events.archive.base.Archive` protocol;
- :mod:`events.archive.schema`: the tables and the steps between schema versions;
- :mod:`events.archive.postgres` (asyncpg, COPY) and :mod:`events.archive.sqlite` (the default);
- :mod:`events.archive.archiver`: one pass over the finished games;
- :mod:`events.archive.reading`: the store that serves archived games as if they were live.

docs/store.md, "The life of a game's data", is the whole story.
"""

from __future__ import annotations

from pathlib import Path

from events.archive.base import Archive, ArchivedGame, ArchiveSchemaError, ArchiveUnavailable, GamePruned

__all__ = [
    "Archive", "ArchiveSchemaError", "ArchiveUnavailable", "ArchivedGame", "GamePruned", "is_postgres_url",
    "open_archive",
]


def is_postgres_url(where: str) -> bool:
    return where.startswith(("postgresql://", "postgres://"))


def open_archive(where: str | Path) -> Archive:
    """The archive at ``where``: a ``postgresql://`` URL, else the path of an SQLite file.
    Nothing is connected until the first call."""
    if isinstance(where, str) and is_postgres_url(where):
        from events.archive.postgres import PostgresArchive

        return PostgresArchive(where)
    from events.archive.sqlite import SqliteArchive

    return SqliteArchive(Path(where))
