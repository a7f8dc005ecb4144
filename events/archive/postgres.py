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
from collections.abc import AsyncIterator, Sequence
from operator import itemgetter
from typing import Any
from urllib.parse import urlsplit

import asyncpg

from events.archive.base import (
    EVENT_COLUMNS,
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

__all__ = ["PostgresArchive"]

SHA256_BYTES = 32

# Each game's copy checked in the transaction that writes it, against the hashes the node read
# live ($2: each game's hashes run together, version order): every row's hash is the live hash
# of its version and sha256(prev || body) of its stored body, with prev the hex of the live hash
# of the version before (the genesis for version 1), which the row of that version was just
# found to hold; no row stores a prev_hash (a break); and there are as many rows as live hashes.
# So the stored rows chain from the genesis to the live head, version by version, and the
# database never sorts them (each row is compared with its own version's live hash).
_CHECK = f"""
SELECT live.game_id FROM unnest($1::text[], $2::bytea[]) AS live(game_id, hashes)
CROSS JOIN LATERAL (
    SELECT count(*) AS rows, bool_and(
        e.prev_hash IS NULL
        AND e.hash = substring(live.hashes FROM (e.version - 1) * {SHA256_BYTES} + 1 FOR {SHA256_BYTES})
        AND e.hash = sha256(CASE WHEN e.version = 1 THEN repeat('0', {2 * SHA256_BYTES})
            ELSE encode(substring(live.hashes FROM (e.version - 2) * {SHA256_BYTES} + 1 FOR {SHA256_BYTES}), 'hex')
            END::bytea || e.body)) AS ok
    FROM events AS e WHERE e.game_id = live.game_id AND e.version >= 1
) AS copy
WHERE copy.ok AND copy.rows * {SHA256_BYTES} = length(live.hashes)
"""
_SESSION = {"jit": "off", "enable_seqscan": "off"}
"""Every query here is a few index ranges (a game's rows, a page of a listing), which the planner
does not always know: on a table not yet analyzed, the estimates of a fresh batch's rows made it
scan the whole events table for the replacing DELETE (40 ms a batch at 240,000 rows, growing
with the archive) and compile the check (JIT, ~130 ms a batch)."""
_SELECT_ENTRIES = "SELECT version, body, prev_hash, hash FROM events"
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
                    command_timeout=self._timeout * 6, server_settings=_SESSION,
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
                for number, statements in steps_after(before, "BYTEA", key='TEXT COLLATE "C"'):
                    async with connection.transaction():
                        for statement in statements:
                            await connection.execute(statement)
                        await connection.execute("DELETE FROM schema_version")
                        await connection.execute("INSERT INTO schema_version VALUES ($1)", number)
                return before, max(before, SCHEMA_VERSION)
            finally:
                await connection.execute("SELECT pg_advisory_unlock(7170023)")

    async def put(self, games: Sequence[ArchivedGame], during: Hook | None = None) -> set[str]:
        if not games:
            return set()
        rows, hashes = zip(*map(stored_rows, games), strict=True)  # ValueError before anything is sent
        ids = [game.game_id for game in games]
        now = int(time.time() * 1000)
        async with self._connection() as connection, connection.transaction():
            await connection.execute("DELETE FROM events WHERE game_id = ANY($1::text[])", ids)
            await connection.execute("DELETE FROM games WHERE game_id = ANY($1::text[])", ids)
            await connection.copy_records_to_table("games", records=[game_row(g, now) for g in games],
                                                   columns=GAME_COLUMNS)
            if during is not None:
                await during()
            await connection.copy_records_to_table("events", records=itertools.chain.from_iterable(rows),
                                                   columns=EVENT_COLUMNS)
            checked = await _checked(connection, games, hashes)
            failed = [game_id for game_id in ids if game_id not in checked]
            if failed:
                await connection.execute("DELETE FROM events WHERE game_id = ANY($1::text[])", failed)
                await connection.execute("DELETE FROM games WHERE game_id = ANY($1::text[])", failed)
        return checked

    async def entries(self, game_id: str, from_version: int = 1, to_version: int | None = None) -> list[Entry]:
        async with self._connection() as connection:
            rows = await connection.fetch(
                _SELECT_ENTRIES + " WHERE game_id = $1 AND version >= $2 AND version <= $3 ORDER BY version",
                game_id, from_version - 1, to_version if to_version is not None else 2**31 - 1,
            )
        return entries_of_rows(rows, from_version)

    async def entries_of(self, game_ids: Sequence[str]) -> dict[str, list[Entry]]:
        async with self._connection() as connection:
            return await _entries_of(connection, game_ids)

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


async def _checked(connection: Any, games: Sequence[ArchivedGame], hashes: Sequence[bytes]) -> set[str]:
    """The games whose rows, as the transaction holds them now, check (see :data:`_CHECK`);
    those of another width (SHA-1, which PostgreSQL cannot hash without an extension) are read
    back and re-chained here from their stored bytes."""
    sha256 = [(game.game_id, raw) for game, raw in zip(games, hashes, strict=True) if _is_sha256(game)]
    found = await connection.fetch(_CHECK, [game_id for game_id, _ in sha256], [raw for _, raw in sha256])
    checked = {row[0] for row in found}
    others = [game for game in games if not _is_sha256(game)]
    copies = await _entries_of(connection, [game.game_id for game in others]) if others else {}
    return checked | {game.game_id for game in others if copy_checks(copies[game.game_id], game)}


def _is_sha256(game: ArchivedGame) -> bool:
    return bool(game.entries) and len(game.head) == 2 * SHA256_BYTES


async def _entries_of(connection: Any, game_ids: Sequence[str]) -> dict[str, list[Entry]]:
    rows = await connection.fetch(
        "SELECT game_id, version, body, prev_hash, hash FROM events WHERE game_id = ANY($1::text[])"
        " ORDER BY game_id, version",
        list(game_ids),
    )
    found: dict[str, list[Entry]] = {game_id: [] for game_id in game_ids}
    for game_id, game_rows in itertools.groupby(rows, key=itemgetter(0)):
        found[game_id] = entries_of_rows(row[1:] for row in game_rows)
    return found


async def _version(connection: Any) -> int:
    await connection.execute(VERSION_TABLE)
    value = await connection.fetchval("SELECT max(version) FROM schema_version")
    return int(value or 0)


def _game_of(row: Any) -> ArchivedGame:
    return game_of_row(tuple(row))
