"""Both archive backends, on the real databases: schema, writes, reads, listings, versions."""

from __future__ import annotations

import dataclasses
import re

import pytest

from events.archive import ArchivedGame, ArchiveSchemaError, ArchiveUnavailable, open_archive
from events.archive.schema import SCHEMA_VERSION


def record(game_id: str, events: int = 3, score: float = 1.0) -> ArchivedGame:
    """A game as the archiver hands it over: its events chained as the store chains them."""
    return dataclasses.replace(chained(game_id, events), score=score, finished_ms=123,
                               meta={"game": b"\xa4tiny", "lobby": b"{}"}, cmds={"": b"0,0", "c1": b"1,3"})


async def kept(archive, games: list[ArchivedGame]) -> None:
    """Write games whose copies do not check, as rows only (a test of the reads, not the check)."""
    if hasattr(archive, "_connection"):
        from events.archive.base import EVENT_COLUMNS, GAME_COLUMNS, game_row, stored_rows

        async with archive._connection() as connection:
            await connection.copy_records_to_table("games", records=[game_row(g, 0) for g in games],
                                                   columns=GAME_COLUMNS)
            for game in games:
                await connection.copy_records_to_table("events", records=list(stored_rows(game)[0]),
                                                       columns=EVENT_COLUMNS)
    else:
        from events.archive.base import GAME_COLUMNS, game_row, stored_rows

        def write(db):
            db.executemany(f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) VALUES ({', '.join('?' * len(GAME_COLUMNS))})",
                           [game_row(g, 0) for g in games])
            db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", [row for g in games for row in stored_rows(g)[0]])

        await archive._run(write)


async def test_a_game_written_reads_back_byte_for_byte(archive):
    assert await archive.put([record("g1"), record("g2", 5, score=2.0)]) == {"g1", "g2"}
    assert await archive.entries("g1") == list(record("g1").entries)
    assert await archive.entries("g2", 2, 3) == list(record("g2", 5).entries)[1:3]
    both = await archive.entries_of(["g1", "g2", "none"])
    assert len(both["g2"]) == 5 and both["none"] == []
    game = await archive.game("g2")
    assert game is not None and game.meta == record("g2").meta and game.cmds == record("g2").cmds
    assert (game.version, game.head, game.score) == (5, record("g2", 5).head, 2.0)
    assert await archive.game("none") is None


async def test_writing_a_game_again_replaces_it_whole(archive):
    assert await archive.put([chained("g1", 3)]) == {"g1"}
    assert await archive.put([chained("g1", 4)]) == {"g1"}
    assert [entry[0] for entry in await archive.entries("g1")] == [1, 2, 3, 4]
    counts = await archive.counts()
    assert (counts.games, counts.events, counts.schema_version) == (1, 4, SCHEMA_VERSION)


async def test_the_listing_pages_in_the_lobby_order(archive):
    await archive.put([dataclasses.replace(chained(f"g{n}", 1), score=float(n)) for n in range(5)])
    assert [game_id for game_id, _ in await archive.listed("finished", 2, 0, True)] == ["g4", "g3"]
    assert [game_id for game_id, _ in await archive.listed("finished", 2, 2, True)] == ["g2", "g1"]
    assert [game_id for game_id, _ in await archive.listed("finished", 2, 0, False)] == ["g0", "g1"]


async def test_a_write_that_fails_half_way_leaves_nothing(archive):
    async def fail() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await archive.put([chained("g1", 3)], during=fail)
    assert await archive.game("g1") is None and await archive.entries("g1") == []


async def test_prune_deletes_the_events_keeps_the_row_and_only_at_the_version_exported(archive):
    games = [dataclasses.replace(record(f"g{n}"), finished_ms=100 + n // 2) for n in range(5)]
    await archive.put(games)
    assert [g.game_id for g in await archive.prunable(102, 10)] == ["g0", "g1", "g2", "g3"]
    assert [g.game_id for g in await archive.prunable(102, 2, (100, "g1"))] == ["g2", "g3"]  # from just after
    assert not await archive.prune("g0", 2, "file:///x/g0.json", 9)  # archived again since: another version
    assert await archive.prune("g0", 3, "file:///x/g0.json", 9)
    assert not await archive.prune("g0", 3, "file:///elsewhere.json", 10)  # pruned already: kept as it was
    assert await archive.entries("g0") == [] and await archive.entries("g1") == list(games[1].entries)
    pruned = await archive.game("g0")
    assert pruned is not None and (pruned.pruned_ms, pruned.export_ref, pruned.meta) == (9, "file:///x/g0.json",
                                                                                         games[0].meta)
    assert [g.game_id for g in await archive.prunable(102, 10)] == ["g1", "g2", "g3"]
    counts = await archive.counts()
    assert (counts.games, counts.events, counts.pruned) == (5, 12, 1)
    await archive.put([games[0]])  # a game archived again (a rematch put it back) is whole and unpruned
    assert (await archive.game("g0")).pruned_ms is None and len(await archive.entries("g0")) == 3


async def test_an_archive_not_migrated_is_refused_with_the_command_to_run(archive_url):
    backend = open_archive(archive_url.removeprefix("sqlite://"))
    try:
        with pytest.raises(ArchiveSchemaError,
                           match=f"schema version 0, this donjon needs {SCHEMA_VERSION}: run `donjon archive"):
            await backend.check()
        assert await backend.migrate() == (0, SCHEMA_VERSION)
        assert await backend.migrate() == (SCHEMA_VERSION, SCHEMA_VERSION)
        await backend.check()
    finally:
        await backend.close()


async def test_an_archive_at_version_1_keeps_its_games_and_gains_the_ledger_table(archive_url):
    """A version-1 archive (games and events only) migrated: its games are still there, and the
    ledger's entries can be written and read."""
    import sqlite3

    from events.archive.schema import steps_after

    backend = open_archive(archive_url.removeprefix("sqlite://"))
    try:
        if archive_url.startswith("sqlite://"):
            path = archive_url.removeprefix("sqlite://")
            with sqlite3.connect(path) as db:
                db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                for statement in steps_after(0, "BLOB")[0][1]:
                    db.execute(statement)
                db.execute("INSERT INTO schema_version VALUES (1)")
        else:
            async with backend._connection() as connection:  # type: ignore[attr-defined]
                await connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                for statement in steps_after(0, "BYTEA")[0][1]:
                    await connection.execute(statement)
                await connection.execute("INSERT INTO schema_version VALUES (1)")
        with pytest.raises(ArchiveSchemaError, match="schema version 1"):
            await backend.check()
        assert await backend.migrate() == (1, SCHEMA_VERSION)
        await backend.put([chained("g1", 3)])
        row = (1, "g1", '{"id":"g1","position":1}', "0" * 64, "a" * 64, True)
        await backend.put_ledger([row])
        await backend.put_ledger([row])  # moved twice (two nodes): kept once
        assert await backend.ledger_rows(1, 10) == [row] and await backend.ledger_rows_at([1, 2]) == [row]
        assert await backend.ledger_position("g1") == 1 and await backend.ledger_position("g2") is None
        assert (await backend.counts()).ledger == 1
    finally:
        await backend.close()


async def test_postgres_that_does_not_answer_is_unavailable_then_served_when_back(postgres_schema_url):
    down = open_archive("postgresql://postgres@127.0.0.1:1/test")
    with pytest.raises(ArchiveUnavailable, match=re.escape("the archive at postgresql://127.0.0.1:1/test")):
        await down.check()
    await down.close()
    backend = open_archive(postgres_schema_url)
    backend._url = "postgresql://postgres@127.0.0.1:1/test"  # type: ignore[attr-defined]
    with pytest.raises(ArchiveUnavailable):
        await backend.migrate()
    backend._url = postgres_schema_url  # type: ignore[attr-defined]
    assert await backend.migrate() == (0, SCHEMA_VERSION)
    await backend.close()


def chained(game_id: str, events: int, algorithm: str = "sha256") -> ArchivedGame:
    """A record whose events chain as the store chains them (the first names its algorithm)."""
    import msgpack

    from events.chain import genesis, link_hash

    prev, entries = genesis(algorithm), []
    for version in range(1, events + 1):
        payload = {"chain": algorithm} if version == 1 and algorithm == "sha256" else {"n": version}
        body = msgpack.packb({"game_id": game_id, "version": version, "payload": payload}, use_bin_type=True)
        hash_ = link_hash(prev, body, algorithm)
        entries.append((version, body, prev, hash_))
        prev = hash_
    return ArchivedGame(game_id=game_id, game="tiny", status="finished", score=0.0, finished_ms=0, version=events,
                        head=prev, meta={}, cmds={}, entries=entries)


async def test_each_copy_is_checked_from_the_stored_rows_before_it_commits(archive):
    """A copy is kept only if its rows re-hash to the game's own hashes and head: a body changed
    (the row's hash no longer its body's), a SHA-1 game re-chained by the node."""
    good, legacy, bad = chained("good", 30), chained("legacy", 12, "sha1"), chained("bad", 5)
    tampered = list(bad.entries)
    version, body, prev, hash_ = tampered[2]
    tampered[2] = (version, body + b"\x00", prev, hash_)
    assert await archive.put([good, legacy, dataclasses.replace(bad, entries=tampered)]) == {"good", "legacy"}
    assert await archive.entries("good") == list(good.entries) and await archive.entries("legacy") == list(legacy.entries)
    assert await archive.game("bad") is None and await archive.entries("bad") == []  # not kept
    assert (await archive.counts()).games == 2


async def test_a_row_hashed_right_but_linked_wrong_fails_the_check(archive):
    """Each row's own hash checks, but one row's prev_hash is not the hash before it (a row of
    another chain): the links are checked too, not only the hashes. Its rows read back as they
    were (the break stored)."""
    from events.chain import link_hash

    forked = chained("forked", 6)
    rows = list(forked.entries)
    version, body, _, _ = rows[3]
    rows[3] = (version, body, "f" * 64, link_hash("f" * 64, body, "sha256"))
    broken = dataclasses.replace(forked, entries=rows, head=rows[-1][3])
    assert await archive.put([broken]) == set()
    await kept(archive, [broken])
    assert await archive.entries("forked") == rows and await archive.entries("forked", 4, 5) == rows[3:5]


async def test_hashes_that_are_not_lowercase_hex_are_refused_before_anything_is_written(archive):
    from events.archive.base import storable

    upper = chained("upper", 3)
    rows = [(v, b, p, h.upper()) for v, b, p, h in upper.entries]
    assert storable(upper.entries) and not storable(rows) and not storable([(1, b"", "0" * 64, "xy" * 32)])
    with pytest.raises(ValueError, match="lowercase hex"):
        await archive.put([dataclasses.replace(upper, entries=rows)])
    assert await archive.game("upper") is None


async def test_an_archive_before_the_lean_events_is_migrated_and_reads_back_byte_for_byte(archive_url):
    """The events before the lean step (hex text, every prev_hash) become its (raw bytes, the links
    not stored) in one step: the games read back the same, a break in a chain included, and a
    hash that is not lowercase hex fails the step, leaving version 2 as it was."""
    import sqlite3

    from events.archive.schema import LEAN_EVENTS_SINCE, steps_after

    before = LEAN_EVENTS_SINCE - 1
    games = [chained("a", 7), chained("b", 3, "sha1"), record("c", 4)]
    v2_rows = [(g.game_id, *entry) for g in games for entry in g.entries]
    backend = open_archive(archive_url.removeprefix("sqlite://"))
    postgres = not archive_url.startswith("sqlite://")
    try:
        statements = [s for _, step in steps_after(0, "BYTEA" if postgres else "BLOB")[:before] for s in step]
        if postgres:
            async with backend._connection() as connection:  # type: ignore[attr-defined]
                await connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                for statement in statements:
                    await connection.execute(statement)
                await connection.execute("INSERT INTO schema_version VALUES ($1)", before)
                await connection.copy_records_to_table("events", records=v2_rows)
                await connection.execute("INSERT INTO events VALUES ('d', 1, '', $1, $2)", "0" * 64, "A" * 64)
        else:
            with sqlite3.connect(archive_url.removeprefix("sqlite://")) as db:
                db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                for statement in statements:
                    db.execute(statement)
                db.execute("INSERT INTO schema_version VALUES (?)", (before,))
                db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", v2_rows + [("d", 1, b"", "0" * 64, "A" * 64)])
        with pytest.raises(Exception, match=r"hexadecimal|user-defined function raised"):
            await backend.migrate()
        assert await backend.schema_version() == before
        if postgres:
            async with backend._connection() as connection:  # type: ignore[attr-defined]
                await connection.execute("DELETE FROM events WHERE game_id = 'd'")
        else:
            await backend._run(lambda db: db.execute("DELETE FROM events WHERE game_id = 'd'"))  # type: ignore[attr-defined]
        assert await backend.migrate() == (before, SCHEMA_VERSION)
        for game in games:
            assert await backend.entries(game.game_id) == list(game.entries)
            assert await backend.entries(game.game_id, 2, 3) == list(game.entries)[1:3]
        assert (await backend.entries_of(["a", "c"])) == {"a": list(games[0].entries), "c": list(games[2].entries)}
    finally:
        await backend.close()


async def test_both_backends_are_archives_and_the_reading_store_is_a_store(archive, embedded_redis_url):
    from events.archive import Archive
    from events.archive.reading import ArchivingStore
    from events.protocol import Store

    assert isinstance(archive, Archive)
    store = await ArchivingStore.connect(embedded_redis_url)
    try:
        assert isinstance(store, Store)
    finally:
        await store.close()
