"""Every read of a finished game answers the same bytes before and after it moved to the archive
(SQLite and PostgreSQL), from a node that never saw it live; a rematch of an archived game works."""

from __future__ import annotations

from typing import Any

import pytest

from events.archive import open_archive
from events.archive.archiver import Archiver
from events.keys import cmds_key, events_key, meta_key
from service.edge.keys import STORE
from service.ops.settings import Secret
from tests.archive_fixtures import archive_url, export_content, postgres_schema_url  # noqa: F401
from tests.service.test_replay import finished_game, played_tiny


@pytest.fixture
def make_archiving(make_client: Any, archive_url: str) -> Any:  # noqa: F811
    """A node whose store reads ``archive_url``; its own passes never run (the test runs them)."""

    async def make() -> Any:
        migrated = open_archive(archive_url.removeprefix("sqlite://"))
        await migrated.migrate()  # what `donjon archive migrate` does first
        await migrated.close()
        return await make_client(archive_url=Secret(archive_url), archive_after_s=0, archive_every_s=3600)

    return make


async def every_read(client: Any, game_id: str) -> dict[str, bytes]:
    """The bytes of every read route of a finished game."""
    paths = [f"/games/{game_id}", f"/games/{game_id}/events", f"/games/{game_id}/events?since=2",
             f"/games/{game_id}/export", f"/games/{game_id}/state", f"/games/{game_id}/state?at=1",
             f"/games/{game_id}/state?at=3"]
    answers = {}
    for path in paths:
        response = await client.get(path)
        assert response.status == 200, (path, await response.text())
        body = await response.read()
        answers[path] = export_content(body) if path.endswith("/export") else body
    return answers


async def archive_now(client: Any, game_id: str) -> int:
    """Archive this one game (a whole pass would archive the other tests' games of the session's server)."""
    store = client.app[STORE]
    report = await Archiver(store.server, store.archive, after_ms=0).archive_batch([game_id])
    return report.archived


async def finished_listing(client: Any) -> list[str]:
    response = await client.get("/games?status=finished&limit=200")
    assert response.status == 200
    return [entry["id"] for entry in (await response.json())["games"]]


async def test_reads_are_byte_identical_after_archiving_from_a_fresh_node(make_archiving):
    first = await make_archiving()
    game_id, _ = await finished_game(first)
    before = await every_read(first, game_id)
    listed_before = await finished_listing(first)
    assert game_id in listed_before
    assert await archive_now(first, game_id) == 1
    redis = first.app[STORE].redis
    assert await redis.exists(meta_key(game_id), events_key(game_id), cmds_key(game_id)) == 0
    fresh = await make_archiving()  # its cache never held the game
    assert await every_read(fresh, game_id) == before
    assert await every_read(first, game_id) == before
    assert game_id in await finished_listing(fresh)


async def finished_with_tokens(client: Any, seed: int = 7) -> tuple[str, list[str]]:
    """A finished tiny game and its seats' tokens."""
    game_id, tokens, players = await played_tiny(client, seed)
    for player in players:
        await player.ws.close()
    return game_id, tokens


async def test_a_rematch_of_an_archived_game_puts_it_back_and_links_it(make_archiving):
    first = await make_archiving()
    game_id, tokens = await finished_with_tokens(first)
    assert await archive_now(first, game_id) == 1
    fresh = await make_archiving()
    response = await fresh.post(f"/games/{game_id}/rematch", headers={"Authorization": f"Bearer {tokens[0]}"})
    assert response.status == 201, await response.text()
    rematch = (await response.json())["id"]
    assert (await (await fresh.get(f"/games/{rematch}")).json())["id"] == rematch
    assert await fresh.app[STORE].redis.exists(meta_key(game_id)) == 1  # live again, to be archived later
    linked = await (await fresh.get(f"/games/{game_id}/events")).read()
    assert rematch.encode() in linked
    assert await archive_now(fresh, game_id) == 1
    assert await fresh.app[STORE].redis.exists(meta_key(game_id)) == 0
    again = await fresh.post(f"/games/{game_id}/rematch", headers={"Authorization": f"Bearer {tokens[1]}"})
    assert again.status == 201 and (await again.json())["id"] == rematch  # one rematch per game


async def test_an_archived_game_is_store_unavailable_while_postgres_is_down_then_served_again(
    make_client, postgres_schema_url  # noqa: F811
):
    migrated = open_archive(postgres_schema_url)
    await migrated.migrate()
    await migrated.close()
    client = await make_client(archive_url=Secret(postgres_schema_url), archive_after_s=0, archive_every_s=3600)
    game_id, _ = await finished_game(client)
    before = await (await client.get(f"/games/{game_id}/events")).read()
    assert await archive_now(client, game_id) == 1
    down = await make_client(archive_url=Secret("postgresql://postgres@127.0.0.1:1/test"))  # nothing there
    response = await down.get(f"/games/{game_id}/events")
    assert response.status == 503 and (await response.json())["error"]["code"] == "store_unavailable"
    assert (await down.get("/games/catalog")).status == 200  # the node serves everything else
    archive = down.app[STORE].archive
    archive._url = postgres_schema_url  # the database is back where the node looks
    assert await (await down.get(f"/games/{game_id}/events")).read() == before
