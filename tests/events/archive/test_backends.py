"""Both archive backends, on the real databases: schema, writes, reads, listings, versions."""

from __future__ import annotations

import dataclasses
import re

import pytest

from events.archive import ArchivedGame, ArchiveSchemaError, ArchiveUnavailable, open_archive
from events.archive.schema import SCHEMA_VERSION


def record(game_id: str, events: int = 3, score: float = 1.0) -> ArchivedGame:
    entries = [(v, f"body-{game_id}-{v}".encode(), f"p{v - 1}", f"h{v}") for v in range(1, events + 1)]
    return ArchivedGame(
        game_id=game_id, game="tiny", status="finished", score=score, finished_ms=123, version=events,
        head=f"h{events}", meta={"game": b"\xa4tiny", "lobby": b"{}"}, cmds={"": b"0,0", "c1": b"1,3"},
        entries=entries,
    )


async def test_a_game_written_reads_back_byte_for_byte(archive):
    await archive.put([record("g1"), record("g2", 5, score=2.0)])
    assert await archive.entries("g1") == list(record("g1").entries)
    assert await archive.entries("g2", 2, 3) == list(record("g2", 5).entries)[1:3]
    both = await archive.entries_of(["g1", "g2", "none"])
    assert len(both["g2"]) == 5 and both["none"] == []
    game = await archive.game("g2")
    assert game is not None and game.meta == record("g2").meta and game.cmds == record("g2").cmds
    assert (game.version, game.head, game.score) == (5, "h5", 2.0)
    assert await archive.game("none") is None


async def test_writing_a_game_again_replaces_it_whole(archive):
    await archive.put([record("g1", 3)])
    await archive.put([record("g1", 4)])
    assert [entry[0] for entry in await archive.entries("g1")] == [1, 2, 3, 4]
    counts = await archive.counts()
    assert (counts.games, counts.events, counts.schema_version) == (1, 4, SCHEMA_VERSION)


async def test_the_listing_pages_in_the_lobby_order(archive):
    await archive.put([record(f"g{n}", 1, score=float(n)) for n in range(5)])
    assert [game_id for game_id, _ in await archive.listed("finished", 2, 0, True)] == ["g4", "g3"]
    assert [game_id for game_id, _ in await archive.listed("finished", 2, 2, True)] == ["g2", "g1"]
    assert [game_id for game_id, _ in await archive.listed("finished", 2, 0, False)] == ["g0", "g1"]


async def test_a_write_that_fails_half_way_leaves_nothing(archive):
    async def fail() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await archive.put([record("g1")], during=fail)
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
        await backend.put([record("g1")])
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


async def test_the_chain_heads_are_recomputed_from_the_stored_rows(archive):
    good, legacy, bad = chained("good", 30), chained("legacy", 12, "sha1"), chained("bad", 5)
    tampered = list(bad.entries)
    version, body, prev, hash_ = tampered[2]
    tampered[2] = (version, body + b"\x00", prev, hash_)
    await archive.put([good, legacy, dataclasses.replace(bad, entries=tampered)])
    heads = await archive.chain_heads(["good", "legacy", "bad", "none"])
    assert heads == {"good": (30, good.head), "legacy": (12, legacy.head), "bad": (5, None), "none": (0, None)}



async def test_a_row_hashed_right_but_linked_wrong_breaks_the_chain(archive):
    """Each row's own hash checks, but one row's prev_hash is not the hash before it (a row of
    another chain): the links are checked too, not only the hashes."""
    from events.chain import link_hash

    forked = chained("forked", 6)
    rows = list(forked.entries)
    version, body, _, _ = rows[3]
    rows[3] = (version, body, "f" * 64, link_hash("f" * 64, body, "sha256"))
    await archive.put([dataclasses.replace(forked, entries=rows)])
    assert await archive.chain_heads(["forked"]) == {"forked": (6, None)}


def test_linked_head_puts_rows_in_version_order_and_checks_every_link():
    from events.archive.base import linked_head

    a, b, c, zero = "a" * 4, "b" * 4, "c" * 4, "0" * 4
    assert linked_head([1, 2, 3], zero + a + b, a + b + c, 4) == c
    assert linked_head([3, 1, 2], b + zero + a, c + a + b, 4) == c
    assert linked_head([1, 2, 4], zero + a + b, a + b + c, 4) is None  # a version missing
    assert linked_head([1, 2, 3], zero + c + b, a + b + c, 4) is None  # a link broken
    assert linked_head([1, 2, 3], a + a + b, a + b + c, 4) is None  # not from the genesis
    assert linked_head([1, 2], zero + a + b, a + b + c, 4) is None  # rows and links disagree
    assert linked_head([], "", "", 4) is None


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
