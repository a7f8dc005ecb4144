"""The reading store: the lobby's finished list paged over the live index and the archive, games
the store never held, and a game put back whole by a write."""

from __future__ import annotations

from typing import Any

import pytest

from events.archive.archiver import Archiver
from events.archive.reading import ArchivingStore
from events.envelope import NewEvent
from events.errors import ConflictError, UnknownGame
from events.keys import meta_key
from tests.archive_fixtures import finished_games, own_valkey  # noqa: F401


@pytest.fixture
async def live(own_valkey: str, archive: Any) -> Any:  # noqa: F811
    store = await ArchivingStore.connect(own_valkey)
    store.attach(archive)
    try:
        yield store
    finally:
        await store.close()


async def test_the_finished_list_pages_over_live_and_archived_games_in_the_lobby_order(live, archive):
    archived = await finished_games(live, 7)
    await Archiver(live.server, archive, after_ms=0).run_pass()
    hot = await finished_games(live, 5, ended_ms_ago=0)
    everything = await live.list_games("finished", 100)
    assert sorted(everything) == sorted(archived + hot) and len(everything) == 12
    pages = [await live.list_games("finished", 5, offset) for offset in (0, 5, 10)]
    assert [game_id for page in pages for game_id in page] == everything
    assert await live.list_games("finished", 100, newest_first=False) == everything[::-1]
    assert await live.count_games("finished") == 12
    assert all([await live.is_filed(game_id, "finished") for game_id in archived])
    assert not await live.is_filed(archived[0], "active")


async def test_a_game_nobody_holds_is_none_everywhere(live):
    assert await live.get_meta("nosuchgame") is None
    assert await live.read("nosuchgame") == [] and await live.raw_entries("nosuchgame") == []
    assert (await live.head("nosuchgame"))[0] == 0
    assert await live.command_result("nosuchgame", "c") is None
    with pytest.raises(UnknownGame):
        await live.update_meta("nosuchgame", {"x": 1})
    with pytest.raises(ConflictError):
        await live.append("nosuchgame", [NewEvent("x")], expected_version=3, command_id="c", actor=None, ts=1)


async def test_an_append_to_an_archived_game_puts_it_back_whole_first(live, archive):
    [game_id] = await finished_games(live, 1)
    before = await live.raw_entries(game_id)
    version, head = await live.head(game_id)
    await Archiver(live.server, archive, after_ms=0).run_pass()
    assert await live.redis.exists(meta_key(game_id)) == 0
    result = await live.append(game_id, [NewEvent("game.rematch", {"id": "r1"})], expected_version=version,
                               command_id="rematch-1", actor=None, ts=2, link=head)
    assert result.first_version == version + 1
    assert (await live.raw_entries(game_id))[:-1] == before
    assert await live.command_result(game_id, f"c-{game_id}") is not None  # the command ids came back too
    assert await live.is_filed(game_id, "finished")


async def test_a_status_filed_for_an_archived_game_puts_it_back_whole_first(live, archive):
    """The lobby write asks the server to refuse a game with no meta rather than asking first
    whether it is live: an archived game is restored, then filed, never left a partial meta."""
    [game_id] = await finished_games(live, 1)
    before = await live.raw_entries(game_id)
    await Archiver(live.server, archive, after_ms=0).run_pass()
    assert await live.redis.exists(meta_key(game_id)) == 0
    assert await live.set_status(game_id, "finished", 5.0, fields={"note": "again"})
    assert await live.raw_entries(game_id) == before
    meta = await live.get_meta(game_id)
    assert meta is not None and meta["status"] == "finished" and meta["note"] == "again" and "game" in meta


async def test_only_live_refuses_a_game_with_no_meta_and_writes_none(live):
    with pytest.raises(UnknownGame):
        await live.set_status("nosuchgame", "open", 1.0, only_live=True)
    assert await live.redis.exists(meta_key("nosuchgame")) == 0
