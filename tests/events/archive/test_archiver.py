"""The archiving pass on real servers: what it moves, the leases between nodes, SIGKILL at each
step in a real ``donjon archive run`` process, and PostgreSQL down then back."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

import pytest

from events.archive import open_archive
from events.archive.archiver import Archiver
from events.archive.reading import ArchivingStore
from events.errors import StoreUnavailable
from events.keys import archive_lease_key, cmds_key, events_key, meta_key
from events.store.lobby import lobby_index
from tests.archive_fixtures import finished_games, own_valkey  # noqa: F401


@pytest.fixture
async def live(own_valkey: str) -> Any:  # noqa: F811
    store = await ArchivingStore.connect(own_valkey)
    try:
        yield store
    finally:
        await store.close()


async def snapshot(store: ArchivingStore, game_ids: list[str]) -> dict[str, Any]:
    """Each game's raw events, meta and head, as the store (live or archive) answers them."""
    return {gid: (await store.raw_entries(gid), await store.get_meta(gid), await store.head(gid)) for gid in game_ids}


async def where(store: ArchivingStore, archive: Any, game_id: str, expected: Any) -> set[str]:
    """Where the game is complete: ``live``, ``archive``, both, or neither (a set)."""
    places = set()
    live = await ArchivingStore.raw_entries(store, game_id) if await store.redis.exists(meta_key(game_id)) else []
    if live == expected[0] and live:
        places.add("live")
    copy = await archive.game(game_id)
    if copy is not None and await archive.entries(game_id) == expected[0] and copy.head == expected[2][1]:
        places.add("archive")
    return places


async def test_a_pass_moves_cold_games_and_leaves_warm_ones(live, archive):
    cold = await finished_games(live, 5, ended_ms_ago=60_000)
    warm = await finished_games(live, 2, ended_ms_ago=0)
    before = await snapshot(live, cold + warm)
    report = await Archiver(live.server, archive, after_ms=30_000).run_pass()
    assert (report.archived, report.waiting) == (5, 2)
    for game_id in cold:
        assert await live.redis.exists(meta_key(game_id), events_key(game_id), cmds_key(game_id)) == 0
    live.attach(archive)
    assert await snapshot(live, cold + warm) == before
    index = lobby_index(live.server, "finished")
    assert sorted(await index.ranked(100)) == sorted(warm)
    assert sorted(await live.list_games("finished", 100)) == sorted(cold + warm)
    assert await live.command_result(cold[0], f"c-{cold[0]}") is not None
    left = {key.decode() for key in await live.redis.keys("game:*")}  # no tombstone, no lease
    assert left == {key(game_id) for game_id in warm for key in (meta_key, events_key, cmds_key)}


async def test_two_nodes_never_archive_one_game_both(live, archive):
    games = await finished_games(live, 40)
    before = await snapshot(live, games)
    first = Archiver(live.server, archive, after_ms=0, batch=10)
    second = Archiver(live.server, archive, after_ms=0, batch=10)
    reports = list(await asyncio.gather(first.run_pass(), second.run_pass(), first.run_pass()))
    # A pass may end after one batch (the SQLite archive has one writer): finish the backlog.
    while (extra := await first.run_pass()).archived:
        reports.append(extra)
    assert sum(report.archived for report in reports) == len(games)
    assert (await archive.counts()).games == len(games)
    live.attach(archive)
    assert await snapshot(live, games) == before


@pytest.mark.parametrize("fault", ["copy", "copied", "delete"])
async def test_sigkill_at_each_step_leaves_every_game_whole_and_the_next_pass_finishes(
    live, archive, archive_url, own_valkey, fault  # noqa: F811
):
    games = await finished_games(live, 30)
    before = await snapshot(live, games)
    env = {**os.environ, "DONJON_REDIS_URL": own_valkey, "DONJON_ARCHIVE_URL": archive_url,
           "DONJON_ARCHIVE_AFTER_S": "0", "DONJON_ARCHIVE_LEASE_MS": "300"}
    killed = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "service", "archive", "run"],
        env={**env, "DONJON_ARCHIVE_FAULT": fault}, capture_output=True, timeout=60,
    )
    assert killed.returncode == -9, killed.stderr.decode()
    places = [await where(live, archive, game_id, before[game_id]) for game_id in games]
    assert all(places), "a game in neither place"
    if fault == "copy":
        assert all(place == {"live"} for place in places)
    if fault == "delete":
        assert any(place == {"archive"} for place in places) and any("live" in place for place in places)
    await asyncio.sleep(0.4)  # the killed pass's leases expire
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "service", "archive", "run"], env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    assert [await where(live, archive, game_id, before[game_id]) for game_id in games] == [{"archive"}] * len(games)
    assert await lobby_index(live.server, "finished").ranked(100) == []
    live.attach(archive)
    assert await snapshot(live, games) == before


async def test_postgres_down_then_back(live, postgres_schema_url):
    games = await finished_games(live, 8)
    before = await snapshot(live, games)
    down = open_archive("postgresql://postgres@127.0.0.1:1/test")
    with pytest.raises(StoreUnavailable):
        await Archiver(live.server, down, after_ms=0).run_pass()
    await down.close()
    assert await snapshot(live, games) == before  # nothing moved, nothing lost
    assert all([not await live.redis.exists(archive_lease_key(game_id)) for game_id in games])  # leases let go
    back = open_archive(postgres_schema_url)
    await back.migrate()
    try:
        assert (await Archiver(live.server, back, after_ms=0).run_pass()).archived == len(games)
        live.attach(back)
        assert await snapshot(live, games) == before
    finally:
        await back.close()


async def test_a_game_whose_hashes_are_not_lowercase_hex_stays_live_and_the_others_move(live, archive):
    """The archive keeps hashes as raw bytes: a stream it could not give back byte for byte
    (here one hash in capitals) is left live, whole, without holding up its batch."""
    games = await finished_games(live, 3)
    odd = games[1]
    stream = await live.redis.xrange(events_key(odd), "-", "+")
    await live.redis.delete(events_key(odd))
    for n, (entry_id, fields) in enumerate(stream, start=1):
        await live.redis.xadd(events_key(odd), {**fields, b"h": fields[b"h"].upper()} if n == len(stream) else fields,
                              id=entry_id)
    before = await snapshot(live, games)
    report = await Archiver(live.server, archive, after_ms=0).run_pass()
    assert (report.archived, report.waiting) == (2, 0)
    assert await live.redis.exists(meta_key(odd), events_key(odd), cmds_key(odd)) == 3
    assert not await live.redis.exists(archive_lease_key(odd))
    live.attach(archive)
    assert await snapshot(live, games) == before
