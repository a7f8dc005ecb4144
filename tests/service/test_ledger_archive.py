"""The public ledger's entries of archived games move to the archive (issue 23) and every ledger
read answers as before: ``GET /ledger``'s pages and a game's entry, the export's ``ledger``
field, ``donjon verify --ledger``; the same with an entry in both places (a move killed after
its copy). On a Valkey of the test's own: a pass moves the entries of every game not live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from events.archive import open_archive
from events.archive.archiver import Archiver
from events.ledger import games_key, ledger_key
from service.edge.keys import STORE
from service.ops.settings import Secret
from service.run.app import create_app
from tests.archive_fixtures import archive_url, export_content, postgres_schema_url  # noqa: F401
from tests.service.conftest import ENGINES, create_tiny, settings_for
from tests.service.contract import CheckedWebSocket, openapi_trace
from tests.service.test_ledger import finished_tiny, saved_export, verify


async def archiving_node(aiohttp_client: Any, valkey: str, archive_url: str) -> Any:  # noqa: F811
    migrated = open_archive(archive_url.removeprefix("sqlite://"))
    await migrated.migrate()  # what `donjon archive migrate` does first
    await migrated.close()
    settings = settings_for(valkey, archive_url=Secret(archive_url), archive_after_s=0, archive_every_s=3600)
    return await aiohttp_client(create_app(settings, engines=ENGINES), ws_response_class=CheckedWebSocket,
                                trace_configs=[openapi_trace()])


def unsigned(answer: dict[str, Any]) -> dict[str, Any]:
    """A ``GET /ledger`` answer without the moment its head was signed (and the signature over
    it): two answers made at two times differ there and nowhere else."""
    head = {name: value for name, value in answer["head"].items() if name not in ("signed_at", "signature")}
    return {**answer, "head": head}


async def ledger_reads(node: Any, game_ids: list[str]) -> dict[str, Any]:
    """Every ledger answer the tests compare: pages (whole, one entry at a time, from the middle)
    and each game's entry, as bytes less the signing moment."""
    queries = [{}, {"limit": "1"}, {"from": "2", "limit": "2"}, {"from": "3"}, {"from": "99"}]
    queries += [{"game": game_id} for game_id in game_ids]
    found = {}
    for query in queries:
        response = await node.get("/ledger", params=query)
        assert response.status == 200, await response.text()
        found[json.dumps(query)] = json.dumps(unsigned(await response.json()), sort_keys=True)
    return found


async def test_ledger_entries_of_archived_games_move_and_every_read_answers_the_same(
    aiohttp_client, valkey, archive_url, capsys, tmp_path: Path  # noqa: F811
):
    node = await archiving_node(aiohttp_client, valkey, archive_url)
    first, _ = await finished_tiny(node)
    playing = await create_tiny(node)  # stays live: its entry stays, between two that move
    second, _ = await finished_tiny(node)
    head = await create_tiny(node)
    ids = [first, playing, second, head]
    before = await ledger_reads(node, ids)
    exports = {game_id: export_content(await (await node.get(f"/games/{game_id}/export")).read())
               for game_id in (first, second)}
    store = node.app[STORE]
    live_before = await store.redis.xlen(ledger_key())

    report = await Archiver(store.server, store.archive, after_ms=0).run_pass()
    assert report.archived == 2 and report.ledger_moved == 2
    assert await store.redis.xlen(ledger_key()) == live_before - 2
    assert await store.redis.hget(games_key(), first) is None and await store.redis.hget(games_key(), second) is None
    assert (await store.archive.counts()).ledger == 2

    assert await ledger_reads(node, ids) == before
    for game_id, content in exports.items():
        assert export_content(await (await node.get(f"/games/{game_id}/export")).read()) == content
        export = await saved_export(node, game_id, tmp_path)
        code, out = await verify(capsys, export, str(node.make_url("/ledger")))
        assert code == 0, out


async def test_an_entry_copied_but_not_yet_deleted_reads_once(
    aiohttp_client, valkey, archive_url  # noqa: F811
):
    """A move killed after its copy leaves the entry in both places: the reads show it once,
    and the next pass finishes the move."""
    node = await archiving_node(aiohttp_client, valkey, archive_url)
    game_id, _ = await finished_tiny(node)
    head = await create_tiny(node)
    store = node.app[STORE]
    archiver = Archiver(store.server, store.archive, after_ms=0)
    assert (await archiver.archive_batch([game_id])).archived == 1  # the game only, its entry still live
    before = await ledger_reads(node, [game_id, head])
    rows = await archiver.ledger._movable(await store.redis.xrange(ledger_key(), "-", "+"))
    assert [row[1] for row in rows] == [game_id]
    await store.archive.put_ledger(rows)  # step 2 done, step 4 not
    assert await ledger_reads(node, [game_id, head]) == before
    assert await archiver.ledger.run_pass() == 1
    assert await ledger_reads(node, [game_id, head]) == before
    assert await archiver.ledger.run_pass() == 0  # the head always stays live


async def test_a_game_re_dealt_after_its_entry_moved_keeps_its_first_entry(
    aiohttp_client, valkey, archive_url  # noqa: F811
):
    """The ledger's guarantee against a game dealt again under its id holds with the entry in
    the archive: the new deal gets the first entry back (whose commitment it does not match),
    never a second one."""
    node = await archiving_node(aiohttp_client, valkey, archive_url)
    game_id, _ = await finished_tiny(node)
    await create_tiny(node)
    store = node.app[STORE]
    assert (await Archiver(store.server, store.archive, after_ms=0).run_pass()).ledger_moved == 1
    first = await store.ledger.entry_at(await store.ledger.position_of(game_id))
    length = await store.redis.xlen(ledger_key())
    again = await store.ledger.record(game_id, {"game": "tiny", "options": {}, "seed_commitment": "f" * 64,
                                                "created": 1})
    assert again == first and await store.redis.xlen(ledger_key()) == length
