"""The archive in PostgreSQL, on asyncpg: one pool, COPY for the bulk writes.

asyncpg rather than psycopg 3: it speaks the binary protocol natively, and its
``copy_records_to_table`` streams a batch's rows in COPY's binary format, which is what lets one
node archive hundreds of games a second (a pass writes every event of a batch in one COPY).

The URL is ``postgresql://user@host:port/db``; any other query parameter is a server setting
(asyncpg's rule), so ``?search_path=donjon`` keeps the tables in a schema of their own. The pool
is opened on first use and again after the database went away, so a node starts while
PostgreSQL is down and archives once it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

import asyncpg

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
    chain_head,
    game_of_row,
    game_row,
    ledger_of_row,
    linked_head,
)
from events.archive.schema import PRUNED_SINCE, SCHEMA_VERSION, VERSION_TABLE, schema_message, steps_after

__all__ = ["PostgresArchive"]

SHA256_HEX = 64
"""Hex digits of a SHA-256 hash."""

# Per game: whether each row's hash is sha256(prev_hash || body), recomputed here from the stored
# bytes, and every row's version, prev_hash and hash, the three in one same (any) order (one
# aggregation's input): the node checks that in version order each row links to the one before,
# from the genesis to the head (:func:`events.archive.base.linked_head`). No window or ordered
# aggregate: sorting each game's rows here cost as much as hashing them. (Were the three ever in
# different orders, the links would not check and the game would stay live: it fails closed.)
# ``prev_hash::bytea`` is the text's bytes for anything without a backslash, which every row
# that passes has: its prev_hash is the hash before it (the links), each hash is hex (the
# comparison with encode()), and the first one is the genesis; it costs less than convert_to().
_CHAIN_HEADS = """
SELECT game_id,
       bool_and(hash = encode(sha256(prev_hash::bytea || body), 'hex')),
       array_agg(version), string_agg(prev_hash, ''), string_agg(hash, '')
FROM events WHERE game_id = ANY($1::text[]) GROUP BY game_id
"""
_EVENT_COLUMNS = ("game_id", "version", "body", "prev_hash", "hash")
_UNAVAILABLE = (OSError, asyncio.TimeoutError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError,
                asyncpg.CannotConnectNowError)


class PostgresArchive:
    """:class:`events.archive.base.Archive` in PostgreSQL."""

    def __init__(self, url: str, *, timeout: float = 5.0, max_size: int = 4) -> None:
        self._url = url
        self._timeout = timeout
        self._max_size = max_size
        self._pool: asyncpg.Pool | None = None
        self._opening = asyncio.Lock()

    @property
    def where(self) -> str:
        parts = urlsplit(self._url)
        return f"postgresql://{parts.hostname}:{parts.port or 5432}{parts.path}"

    async def _open(self) -> asyncpg.Pool:
        async with self._opening:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self._url, min_size=1, max_size=self._max_size, timeout=self._timeout,
                    command_timeout=self._timeout * 6,
                )
            return self._pool

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        """A pooled connection; a database that cannot be reached is :class:`ArchiveUnavailable`,
        and the pool is dropped so the next call connects afresh."""
        try:
            pool = await self._open()
            async with pool.acquire() as connection:
                yield connection
        except _UNAVAILABLE as exc:
            await self._drop_pool()
            raise ArchiveUnavailable(f"{type(exc).__name__}: the archive at {self.where}: {exc}") from exc

    async def _drop_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()

    async def schema_version(self) -> int:
        async with self._connection() as connection:
            return await _version(connection)

    async def check(self) -> None:
        found = await self.schema_version()
        if found != SCHEMA_VERSION:
            raise ArchiveSchemaError(schema_message(found, self.where))

    async def migrate(self) -> tuple[int, int]:
        async with self._connection() as connection:
            await connection.execute("SELECT pg_advisory_lock(7170023)")  # one migrating node at a time
            try:
                before = await _version(connection)
                for number, statements in steps_after(before, "BYTEA"):
                    async with connection.transaction():
                        for statement in statements:
                            await connection.execute(statement)
                        await connection.execute("DELETE FROM schema_version")
                        await connection.execute("INSERT INTO schema_version VALUES ($1)", number)
                return before, max(before, SCHEMA_VERSION)
            finally:
                await connection.execute("SELECT pg_advisory_unlock(7170023)")

    async def put(self, games: Sequence[ArchivedGame], during: Hook | None = None) -> None:
        if not games:
            return
        ids = [game.game_id for game in games]
        now = int(time.time() * 1000)
        async with self._connection() as connection, connection.transaction():
            await connection.execute("DELETE FROM events WHERE game_id = ANY($1::text[])", ids)
            await connection.execute("DELETE FROM games WHERE game_id = ANY($1::text[])", ids)
            await connection.copy_records_to_table("games", records=[game_row(g, now) for g in games],
                                                   columns=GAME_COLUMNS)
            if during is not None:
                await during()
            await connection.copy_records_to_table(
                "events",
                records=_event_rows(games),
                columns=_EVENT_COLUMNS,
            )

    async def entries(self, game_id: str, from_version: int = 1, to_version: int | None = None) -> list[Entry]:
        async with self._connection() as connection:
            rows = await connection.fetch(
                "SELECT version, body, prev_hash, hash FROM events WHERE game_id = $1 AND version >= $2"
                " AND version <= $3 ORDER BY version",
                game_id, from_version, to_version if to_version is not None else 2**31 - 1,
            )
        return [(row[0], bytes(row[1]), row[2], row[3]) for row in rows]

    async def entries_of(self, game_ids: Sequence[str]) -> dict[str, list[Entry]]:
        found: dict[str, list[Entry]] = {game_id: [] for game_id in game_ids}
        async with self._connection() as connection:
            rows = await connection.fetch(
                "SELECT game_id, version, body, prev_hash, hash FROM events WHERE game_id = ANY($1::text[])"
                " ORDER BY game_id, version",
                list(game_ids),
            )
        for row in rows:
            found[row[0]].append((row[1], bytes(row[2]), row[3], row[4]))
        return found

    async def chain_heads(self, game_ids: Sequence[str]) -> dict[str, tuple[int, str | None]]:
        """SHA-256 games: each row re-hashed by PostgreSQL itself (``sha256()``), the links and
        versions checked here on what it read back; SHA-1 games, which it cannot hash without an
        extension, re-chained here from their rows."""
        async with self._connection() as connection:
            rows = await connection.fetch(_CHAIN_HEADS, list(game_ids))
        heads: dict[str, tuple[int, str | None]] = dict.fromkeys(game_ids, (0, None))
        legacy = []
        for game_id, hashed_ok, versions, prevs, hashes in rows:
            head = linked_head(versions, prevs, hashes, SHA256_HEX)
            if head is None and len(hashes) != SHA256_HEX * len(versions):
                legacy.append(game_id)
            heads[game_id] = (len(versions), head if hashed_ok else None)
        for game_id, copy in (await self.entries_of(legacy)).items() if legacy else ():
            heads[game_id] = (len(copy), chain_head(copy))
        return heads

    async def game(self, game_id: str) -> ArchivedGame | None:
        async with self._connection() as connection:
            row = await connection.fetchrow(
                SELECT_GAME + " WHERE game_id = $1", game_id
            )
        return None if row is None else _game_of(row)

    async def listed(self, status: str, limit: int, offset: int, newest_first: bool) -> list[tuple[str, float]]:
        order = "DESC" if newest_first else "ASC"
        async with self._connection() as connection:
            rows = await connection.fetch(
                f"SELECT game_id, score FROM games WHERE status = $1 ORDER BY score {order}, game_id {order}"
                " LIMIT $2 OFFSET $3",
                status, limit, offset,
            )
        return [(row[0], row[1]) for row in rows]

    async def counts(self) -> ArchiveCounts:
        async with self._connection() as connection:
            version = await _version(connection)
            if version == 0:
                return ArchiveCounts(0, 0, 0)
            games = await connection.fetchval("SELECT count(*) FROM games")
            events = await connection.fetchval("SELECT count(*) FROM events")
            ledger = await connection.fetchval("SELECT count(*) FROM ledger") if version >= 2 else 0
            pruned = (await connection.fetchval("SELECT count(pruned_ms) FROM games")
                      if version >= PRUNED_SINCE else 0)
        return ArchiveCounts(int(games), int(events), version, int(ledger), int(pruned))

    async def prunable(self, finished_before_ms: int, limit: int, after: Position = FIRST) -> list[ArchivedGame]:
        async with self._connection() as connection:
            rows = await connection.fetch(
                SELECT_GAME + " WHERE pruned_ms IS NULL AND finished_ms < $1 AND (finished_ms, game_id) > ($2, $3)"
                " ORDER BY finished_ms, game_id LIMIT $4", finished_before_ms, after[0], after[1], limit,
            )
        return [_game_of(row) for row in rows]

    async def prune(self, game_id: str, version: int, export_ref: str, now_ms: int) -> bool:
        async with self._connection() as connection, connection.transaction():
            marked = await connection.execute(
                "UPDATE games SET pruned_ms = $3, export_ref = $4 WHERE game_id = $1 AND version = $2"
                " AND pruned_ms IS NULL", game_id, version, now_ms, export_ref,
            )
            if marked == "UPDATE 0":
                return False
            await connection.execute("DELETE FROM events WHERE game_id = $1", game_id)
            return True

    async def put_ledger(self, rows: Sequence[LedgerRow]) -> None:
        if not rows:
            return
        columns = list(zip(*rows, strict=True))
        async with self._connection() as connection:
            await connection.execute(
                "INSERT INTO ledger (position, game_id, entry, prev_hash, hash, indexed)"
                " SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[])"
                " ON CONFLICT (position) DO NOTHING",
                columns[0], columns[1], columns[2], columns[3], columns[4], [int(flag) for flag in columns[5]],
            )

    async def ledger_rows(self, start: int, limit: int) -> list[LedgerRow]:
        async with self._connection() as connection:
            rows = await connection.fetch(SELECT_LEDGER + " WHERE position >= $1 ORDER BY position LIMIT $2",
                                          start, limit)
        return [ledger_of_row(row) for row in rows]

    async def ledger_rows_at(self, positions: Sequence[int]) -> list[LedgerRow]:
        async with self._connection() as connection:
            rows = await connection.fetch(SELECT_LEDGER + " WHERE position = ANY($1::bigint[]) ORDER BY position",
                                          list(positions))
        return [ledger_of_row(row) for row in rows]

    async def ledger_position(self, game_id: str) -> int | None:
        async with self._connection() as connection:
            value = await connection.fetchval(
                "SELECT position FROM ledger WHERE game_id = $1 AND indexed = 1 ORDER BY position LIMIT 1", game_id
            )
        return None if value is None else int(value)

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(pool.close(), self._timeout)


def _event_rows(games: Sequence[ArchivedGame]) -> Iterator[tuple[Any, ...]]:
    """The ``events`` rows of ``games``, built by zip and chained (no Python frame per event:
    COPY pulls the rows through C iterators only, one generator step per game)."""
    return itertools.chain.from_iterable(
        zip(itertools.repeat(game.game_id), *zip(*game.entries, strict=True), strict=False) for game in games
    )


async def _version(connection: Any) -> int:
    await connection.execute(VERSION_TABLE)
    value = await connection.fetchval("SELECT max(version) FROM schema_version")
    return int(value or 0)


def _game_of(row: Any) -> ArchivedGame:
    return game_of_row(tuple(row))
