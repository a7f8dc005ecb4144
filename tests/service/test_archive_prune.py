"""``donjon archive prune`` on SQLite and PostgreSQL: an archived game older than the cutoff is
exported (the very bytes ``donjon export`` gives), verified from disk, then its events deleted
from the archive, its row kept; reads of it answer ``game_pruned`` (410) naming the export; a
newer game is untouched; a second run changes nothing; the ledger still verifies after it; and
a real prune SIGKILLed after the file is written, or after it verified, leaves the game whole
and the next run finishes the job."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from events.archive.base import GamePruned
from service.edge.keys import DEPLOYMENT_KEYS, STORE
from service.fairness.export import export_file_bytes, signed_export
from service.fairness.trusted_keys import TrustedKeys
from service.fairness.verify import parse_export, verify_export
from service.run.pruning import Pruner, export_path
from tests.archive_fixtures import archive_url, export_content, postgres_schema_url  # noqa: F401
from tests.service.conftest import ENGINES, hello
from tests.service.test_archive_cli import donjon
from tests.service.test_archive_reads import archive_now, finished_listing, finished_with_tokens, make_archiving  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
READS = ("", "/events", "/events?since=2", "/state", "/state?at=3", "/export")


async def pruner_of(client: Any, folder: Path, now: int) -> Pruner:
    """A pruner on the node's store and archive, its clock stopped at ``now``."""
    keys = client.app[DEPLOYMENT_KEYS]
    trusted = TrustedKeys.from_listing(await keys.listing())
    return Pruner(client.app[STORE], client.app[STORE].archive, folder, signer=await keys.signer(), trusted=trusted,
                  engines=ENGINES, clock=lambda: now)


async def finished_ms(client: Any, game_id: str) -> int:
    record = await client.app[STORE].archive.game(game_id)
    assert record is not None
    return int(record.finished_ms)


async def test_prune_exports_the_export_verifies_it_and_reads_answer_game_pruned(make_archiving, tmp_path):  # noqa: F811
    first = await make_archiving()
    old, tokens = await finished_with_tokens(first, seed=7)
    new, _ = await finished_with_tokens(first, seed=8)
    assert await archive_now(first, old) == 1 and await archive_now(first, new) == 1
    store, archive = first.app[STORE], first.app[STORE].archive
    cutoff = await finished_ms(first, old) + 1
    assert await finished_ms(first, new) >= cutoff, "the two games ended in one millisecond"
    now = await finished_ms(first, new) + 5
    exported = export_file_bytes(await signed_export(store, old, "tiny", await first.app[DEPLOYMENT_KEYS].signer(), now))
    new_entries = await archive.entries(new)
    folder = tmp_path / "exports"

    report = await (await pruner_of(first, folder, now)).run(older_than_ms=now - cutoff)

    assert (report.pruned, report.failed, report.reused) == ([old], {}, 0)
    path = export_path(folder, old)
    assert path.read_bytes() == exported  # byte for byte what export gave before the prune
    assert list(folder.iterdir()) == [path]  # no temporary file left
    trusted = TrustedKeys.from_listing(await first.app[DEPLOYMENT_KEYS].listing())
    assert verify_export(parse_export(path.read_text()), ENGINES, trusted=trusted).ok
    assert await archive.entries(old) == []
    record = await archive.game(old)
    assert record is not None and (record.pruned_ms, record.export_ref) == (now, path.resolve().as_uri())
    assert await archive.entries(new) == new_entries and (await archive.game(new)).pruned_ms is None
    assert (await archive.counts()).pruned == 1

    fresh = await make_archiving()  # a node whose cache never held the games
    for node, read in itertools.product((fresh, first), READS):  # first: the node that played it, cached
        response = await node.get(f"/games/{old}{read}")
        error = (await response.json())["error"]
        assert (response.status, error["code"]) == (410, "game_pruned"), read
        assert path.resolve().as_uri() in error["message"]
        assert (await node.get(f"/games/{new}{read}")).status == 200, read
    assert {old, new} <= set(await finished_listing(fresh))  # the lobby still lists it
    rematch = await fresh.post(f"/games/{old}/rematch", headers={"Authorization": f"Bearer {tokens[0]}"})
    assert (rematch.status, (await rematch.json())["error"]["code"]) == (410, "game_pruned")
    ws, frame = await hello(fresh, old, tokens[0])
    assert (frame["type"], frame["code"]) == ("error", "game_pruned")
    await ws.close()
    with pytest.raises(GamePruned):  # never put back without its events
        await fresh.app[STORE].restore(old)

    ledger = await (await fresh.get(f"/ledger?game={new}")).json()  # the game after the pruned one
    newer_export = await (await fresh.get(f"/games/{new}/export")).json()
    assert verify_export(newer_export, ENGINES, trusted=trusted, ledger=ledger).ok
    ledger_of_old = await (await fresh.get(f"/ledger?game={old}")).json()
    assert verify_export(parse_export(path.read_text()), ENGINES, trusted=trusted, ledger=ledger_of_old).ok

    again = await (await pruner_of(first, folder, now + 1)).run(older_than_ms=now - cutoff)
    assert (again.pruned, again.failed, again.reused) == ([], {}, 0)
    assert path.read_bytes() == exported and await archive.entries(new) == new_entries


async def test_the_commands_prune_status_and_refuse_a_pruned_game(
    make_archiving, embedded_redis_url, archive_url, monkeypatch, capsys, tmp_path  # noqa: F811
):
    client = await make_archiving()
    game_id, _ = await finished_with_tokens(client)
    assert await archive_now(client, game_id) == 1
    monkeypatch.setenv("DONJON_REDIS_URL", embedded_redis_url)
    monkeypatch.setenv("DONJON_ARCHIVE_URL", archive_url)
    keys = tmp_path / "keys.json"
    keys.write_bytes(await (await client.get("/keys")).read())
    before = tmp_path / "before.json"
    assert (await donjon(capsys, "export", game_id, "-o", str(before)))[0] == 0
    folder = tmp_path / "exports"

    code, out, _ = await donjon(capsys, "archive", "prune", "--older-than", "0", "--to", str(folder), "--dry-run",
                                "--json")
    assert code == 0 and json.loads(out)["games"] == [game_id] and not folder.exists()
    assert await client.app[STORE].archive.entries(game_id) != []
    code, out, err = await donjon(capsys, "archive", "prune", "--older-than", "0", "--to", str(folder), "--json")
    assert code == 0, err
    assert json.loads(out)["games"] == [game_id]
    pruned = export_path(folder, game_id)
    assert export_content(pruned.read_bytes()) == export_content(before.read_bytes())
    ledger = tmp_path / "ledger.json"
    ledger.write_bytes(await (await client.get(f"/ledger?game={game_id}")).read())
    code, out, _ = await donjon(capsys, "verify", str(pruned), "--keys", str(keys), "--ledger", str(ledger))
    assert code == 0 and out.startswith(f"game      {game_id}") and "ledger position" in out
    code, out, _ = await donjon(capsys, "archive", "status", "--json")
    assert code == 0 and json.loads(out)["pruned_games"] == 1
    for command in (["export", game_id], ["replay", game_id]):
        code, _, err = await donjon(capsys, *command)
        assert code == 1 and "was pruned from the archive" in err and pruned.resolve().as_uri() in err
    code, out, _ = await donjon(capsys, "archive", "prune", "--older-than", "0", "--to", str(folder), "--json")
    assert code == 0 and json.loads(out)["pruned"] == 0
    with pytest.raises(SystemExit) as refused:
        await donjon(capsys, "archive", "prune", "--older-than", "-1", "--to", str(folder))
    assert refused.value.code == 2 and "not a number of days" in capsys.readouterr().err


def prune_process(env: dict[str, str], folder: Path, fault: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """A real ``donjon archive prune`` serving the tests' engines (the tiny game), killed at ``fault``."""
    script = ("import sys; from service.run.cli import main; from tests.service.conftest import ENGINES;"
              " sys.exit(main(sys.argv[1:], ENGINES))")
    extra = {} if fault is None else {"DONJON_ARCHIVE_FAULT": fault}
    return subprocess.run([sys.executable, "-c", script, "archive", "prune", "--older-than", "0", "--to", str(folder),
                           "--json"], env={**env, **extra}, cwd=ROOT, capture_output=True, timeout=120)


@pytest.mark.parametrize("fault", ["written", "exported"])
async def test_sigkill_after_the_file_leaves_the_game_whole_and_the_next_run_finishes(
    make_archiving, embedded_redis_url, archive_url, tmp_path, fault  # noqa: F811
):
    client = await make_archiving()
    game_id, _ = await finished_with_tokens(client)
    assert await archive_now(client, game_id) == 1
    archive = client.app[STORE].archive
    entries = await archive.entries(game_id)
    env = {**os.environ, "DONJON_REDIS_URL": embedded_redis_url, "DONJON_ARCHIVE_URL": archive_url}
    folder = tmp_path / "exports"

    killed = await asyncio.to_thread(prune_process, env, folder, fault)

    assert killed.returncode == -9, killed.stderr.decode()
    assert await archive.entries(game_id) == entries and (await archive.game(game_id)).pruned_ms is None
    written = export_path(folder, game_id).read_bytes()  # on disk, whole, before anything was deleted
    done = await asyncio.to_thread(prune_process, env, folder)
    assert done.returncode == 0, done.stderr.decode()
    figures = json.loads(done.stdout)
    assert (figures["games"], figures["reused_exports"]) == ([game_id], 1)
    assert export_path(folder, game_id).read_bytes() == written  # kept, not written again
    assert await archive.entries(game_id) == [] and (await archive.game(game_id)).pruned_ms is not None


async def test_a_game_live_again_is_left_to_be_archived_again_and_the_limit_holds(make_archiving, tmp_path):  # noqa: F811
    first = await make_archiving()
    rematched, tokens = await finished_with_tokens(first, seed=7)
    others = [(await finished_with_tokens(first, seed=seed))[0] for seed in (8, 9)]
    for game_id in (rematched, *others):
        assert await archive_now(first, game_id) == 1
    fresh = await make_archiving()
    answer = await fresh.post(f"/games/{rematched}/rematch", headers={"Authorization": f"Bearer {tokens[0]}"})
    assert answer.status == 201  # the rematch link put the game back live
    archive = first.app[STORE].archive
    kept = await archive.entries(rematched)
    now = max([await finished_ms(first, game_id) for game_id in others]) + 5

    report = await (await pruner_of(first, tmp_path / "exports", now)).run(older_than_ms=0, limit=1)

    assert (report.live, report.pruned, report.failed) == (1, [others[0]], {})
    assert await archive.entries(rematched) == kept and (await archive.game(rematched)).pruned_ms is None
    assert not export_path(tmp_path / "exports", rematched).exists()
    assert (await archive.game(others[1])).pruned_ms is None  # beyond the limit
