"""``donjon bench --only archive``: finished games into the archive, what it leaves in Valkey, and
reads of archived games.

On a throwaway embedded Valkey (fsync everysec) the bench writes ``games`` finished games straight
to the store as the service writes them (a SHA-256 chain, the meta with its lobby entry, filed as
finished, an entry in the public ledger), each of ``events`` events whose bodies are the size of
a real game's (~300 bytes), and measures:

- **throughput**: one node's archiving passes (:class:`events.archive.archiver.Archiver`, batches
  of 200, three in flight: probe, lease, read, COPY and its check in one transaction, conditional delete,
  unlist; then the ledger's entries of those games) into the local PostgreSQL
  (``DONJON_BENCH_POSTGRES_URL``, default the database ``test`` of 127.0.0.1:5432, in a schema of
  its own dropped afterwards), games/s and events/s; and into the SQLite default, on fewer games;
- **Valkey memory** (``used_memory`` less the clients' buffers) of the empty server and after
  every game was archived (the games and their ledger entries: the pass moves both; the
  ledger's head stays); "empty" is measured after a warm-up pass of 50 games (created,
  archived), since a freshly started server holds ~0.5 MiB less whatever comes after: the
  allocator's caches and the scripts, not data;
- **reads**: p50/p99 of ``store.read(game_id)`` of random archived games through the service's
  store (:class:`events.archive.reading.ArchivingStore`), 1,000 reads.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

__all__ = ["archive_figures"]

POSTGRES_URL = os.environ.get("DONJON_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
_PAYLOAD = {"tile": "CRFRf", "x": 3, "y": -2, "rotation": 90, "meeple": {"seat": 1, "feature": "city", "at": 2},
            "scores": [12, 30, 7, 0], "legal_hint": "x" * 120}


async def archive_figures(quick: bool = False, games: int | None = None, events: int = 200) -> dict[str, str]:
    """The archive section's figures (10,000 games; 1,000 with ``quick``)."""
    from events.embedded import EmbeddedServer

    count = games if games is not None else (1_000 if quick else 10_000)
    figures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with EmbeddedServer(Path(folder) / "valkey", fsync="everysec") as server:
            schema = await _fresh_schema()
            if schema is None:
                figures["archive: PostgreSQL"] = f"skipped: no PostgreSQL at {POSTGRES_URL}"
            else:
                try:
                    figures.update(await _measure(server.url, f"{POSTGRES_URL}?search_path={schema}", "PostgreSQL",
                                                  count, events, reads=True))
                finally:
                    await _drop_schema(schema)
            sqlite_count = min(count, 1_000)
            figures.update(await _measure(server.url, str(Path(folder) / "archive.sqlite3"), "SQLite",
                                          sqlite_count, events, reads=False))
    return figures


async def _measure(url: str, where: str, label: str, count: int, events: int, *, reads: bool) -> dict[str, str]:
    from events.archive import open_archive
    from events.archive.archiver import Archiver
    from events.archive.reading import ArchivingStore

    store = await ArchivingStore.connect(url)
    archive = open_archive(where)
    figures: dict[str, str] = {}
    try:
        await archive.migrate()
        fresh = await _used_memory(store)
        archiver = Archiver(store.server, archive, after_ms=0)
        await _write_games(store, 50, events)  # a warm-up: the allocator's caches and the scripts settle
        await archiver.run_pass()
        empty = await _used_memory(store)
        ids = await _write_games(store, count, events)
        full = await _used_memory(store)
        cpu = time.process_time()
        started = time.perf_counter()
        archived = 0
        while archived < count:
            report = await archiver.run_pass()
            if not report.archived:
                break
            archived += report.archived
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu
        after = await _used_memory(store)
        figures[f"archive: throughput into {label}, one node ({count:,} games of {events} events)"] = (
            f"{archived / seconds:,.0f} games/s ({archived * events / seconds:,.0f} events/s; {archived:,} in"
            f" {seconds:.1f} s; the node's CPU {cpu / max(archived, 1) * 1e6:,.0f} µs per game)"
            + (" (target ≥ 500 games/s)" if label == "PostgreSQL" else "")
        )
        if label == "PostgreSQL":
            figures[f"archive: Valkey used_memory, empty / {count:,} finished games / after archiving"] = (
                f"{empty / 2**20:,.2f} / {full / 2**20:,.1f} / {after / 2**20:,.2f} MiB = {after / empty:.3f} x empty"
                f" (target within 10 %; the empty server after a warm-up pass, {fresh / 2**20:,.2f} MiB freshly"
                f" started; {await store.redis.dbsize()} keys left)"
            )
        if reads:
            store.attach(archive)
            figures[f"archive: read of an archived game's {events} events (store.read), p50 / p99"] = (
                await _read_latency(store, ids)
            )
    finally:
        await store.close()
        await archive.close()
    return figures


async def _write_games(store: Any, count: int, events: int) -> list[str]:
    """``count`` finished games as the service writes them (each with its entry in the public
    ledger, recorded between its meta and its first events); their ids."""
    from events.chain import genesis
    from events.envelope import NewEvent

    now = int(time.time() * 1000) - 60_000
    run = uuid.uuid4().hex[:8]
    ids = []
    for n in range(count):
        game_id = f"bench-{run}-{n:05d}"
        batch = [NewEvent("game.created", {"chain": "sha256", "seats": 2})]
        batch += [NewEvent("tile_placed", {**_PAYLOAD, "n": i}) for i in range(events - 2)]
        batch.append(NewEvent("game.finished", {"winner": n % 2}))
        await store.create_game(game_id, {"game": "bench", "seats": 2, "options": {}})
        await store.ledger.record(game_id, {"game": "bench", "options": {}, "seed_commitment": f"{n:064x}",
                                            "created": now + n})  # as service.fairness.ledger.record_game
        await store.append(game_id, batch, expected_version=0, command_id=f"c-{game_id}", actor=None, ts=now,
                           link=genesis("sha256"))
        entry = {"id": game_id, "game": "bench", "status": "finished", "version": events, "created": now + n}
        await store.set_status(game_id, "finished", now + n, version=events, fields={"lobby": json.dumps(entry)})
        ids.append(game_id)
    return ids


async def _used_memory(store: Any) -> int:
    """Valkey's ``used_memory`` less its clients' buffers (the bench's own connections, not data).
    The pool's connections are closed first: the server counts a client's buffers lazily, so
    one that had just carried a pass's replies could be subtracted for more than it still held
    (the "empty" figure came out at 0.7 MiB, or below zero, one run in two)."""
    await store.redis.connection_pool.disconnect()
    await asyncio.sleep(0.2)  # the server frees the closed clients
    memory = await store.redis.info("memory")
    return int(memory["used_memory"]) - int(memory.get("mem_clients_normal", 0))


async def _read_latency(store: Any, ids: list[str], reads: int = 1_000) -> str:
    picks = random.Random(7).choices(ids, k=reads)
    took = []
    for game_id in picks:
        started = time.perf_counter()
        await store.read(game_id)
        took.append(time.perf_counter() - started)
    took.sort()
    p50, p99 = took[len(took) // 2], took[int(len(took) * 0.99)]
    return f"{p50 * 1000:.1f} / {p99 * 1000:.1f} ms (target p99 < 20 ms)"


async def _fresh_schema() -> str | None:
    import asyncpg

    schema = f"bench_archive_{uuid.uuid4().hex[:8]}"
    try:
        connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
    except (OSError, asyncpg.PostgresError):
        return None
    try:
        await connection.execute(f"CREATE SCHEMA {schema}")
    finally:
        await connection.close()
    return schema


async def _drop_schema(schema: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
    try:
        await connection.execute(f"DROP SCHEMA {schema} CASCADE")
    finally:
        await connection.close()
