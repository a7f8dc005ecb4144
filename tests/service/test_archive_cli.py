"""``donjon archive migrate|run|status``, and ``donjon replay``/``export``/``verify`` of an archived
game answering exactly what they answered while it was live (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from events.archive.schema import SCHEMA_VERSION
from events.keys import meta_key
from service.edge.keys import STORE
from service.ops.settings import Secret
from service.run.app import create_app
from service.run.cli import main
from tests.archive_fixtures import archive_url, export_content, own_valkey, postgres_schema_url  # noqa: F401
from tests.service.conftest import ENGINES, settings_for
from tests.service.test_replay import finished_game


async def donjon(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, list(argv), ENGINES)
    printed = capsys.readouterr()
    return code, printed.out, printed.err


async def every_command(capsys: Any, game_id: str, folder: Path, keys: Path) -> dict[str, Any]:
    """What replay, export and verify (pinned to the deployment's saved ``keys``) print and write
    for ``game_id``; the export without the moment it was made."""
    exported = folder / f"{game_id}-{len(list(folder.iterdir()))}.json"
    code, out, err = await donjon(capsys, "replay", game_id, "--json")
    report = json.loads(out)
    report = {k: v for k, v in report.items() if not k.endswith("_per_second")}  # the fold's speed, the one figure that is not the game's
    export = await donjon(capsys, "export", game_id, "-o", str(exported))
    return {
        "replay": (code, report, err),
        "export": (export, export_content(exported.read_bytes())),
        "verify": await donjon(capsys, "verify", str(exported), "--keys", str(keys), "--json"),
    }


async def test_the_commands_answer_the_same_after_archiving(
    aiohttp_client, own_valkey, archive_url, monkeypatch, capsys, tmp_path  # noqa: F811
):
    monkeypatch.setenv("DONJON_REDIS_URL", own_valkey)  # `archive run` archives every finished game there
    monkeypatch.setenv("DONJON_ARCHIVE_URL", archive_url)
    monkeypatch.setenv("DONJON_ARCHIVE_AFTER_S", "0")
    code, out, _ = await donjon(capsys, "archive", "migrate")
    assert code == 0 and f"schema version 0 -> {SCHEMA_VERSION}" in out
    settings = settings_for(own_valkey, archive_url=Secret(archive_url), archive_every_s=3600)
    client = await aiohttp_client(create_app(settings, engines=ENGINES))
    game_id, _ = await finished_game(client)
    keys = tmp_path / "keys.json"
    keys.write_bytes(await (await client.get("/keys")).read())
    exports = tmp_path / "exports"
    exports.mkdir()
    before = await every_command(capsys, game_id, exports, keys)
    assert before["replay"][0] == 0 and before["export"][0][0] == 0 and before["verify"][0] == 0
    code, out, _ = await donjon(capsys, "archive", "status", "--json")
    status = json.loads(out)
    assert code == 0 and status["backlog"] >= 1 and status["oldest_unarchived_finished_ms"] is not None
    code, out, _ = await donjon(capsys, "archive", "run", "--json")
    assert code == 0 and json.loads(out)["archived"] >= 1
    assert await client.app[STORE].redis.exists(meta_key(game_id)) == 0
    assert await every_command(capsys, game_id, exports, keys) == before
    code, out, _ = await donjon(capsys, "archive", "status", "--json")
    status = json.loads(out)
    assert status["archived_games"] >= 1 and status["archived_events"] >= 1 and status["schema_version"] == SCHEMA_VERSION
    assert status["archived_ledger_entries"] >= 0  # the game's entry is the ledger's head: it stays live


async def test_an_archive_not_migrated_is_refused_with_the_command_to_run(
    embedded_redis_url, postgres_schema_url, monkeypatch, capsys  # noqa: F811
):
    monkeypatch.setenv("DONJON_REDIS_URL", embedded_redis_url)
    monkeypatch.setenv("DONJON_ARCHIVE_URL", postgres_schema_url)
    code, _, err = await donjon(capsys, "archive", "status")
    assert code == 2 and f"schema version 0, this donjon needs {SCHEMA_VERSION}: run `donjon archive migrate`" in err


@pytest.mark.parametrize("command", ["run", "status", "migrate"])
async def test_no_archive_without_a_url_beside_a_shared_store(embedded_redis_url, monkeypatch, capsys, command):
    monkeypatch.setenv("DONJON_REDIS_URL", embedded_redis_url)
    monkeypatch.delenv("DONJON_ARCHIVE_URL", raising=False)
    code, _, err = await donjon(capsys, "archive", command)
    assert code == 2 and "no archive here" in err
