"""Fairness on the served path: SHA-256 chains linked by the append script, seats' contributions
to the game seed, seeds sealed at rest, and games recorded before all this (random.Random draws,
SHA-1 chain) still replaying."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import games
from events.chain import genesis
from events.envelope import NewEvent
from events.errors import ChainBroken
from events.store import meta_key
from projections.game import GameProjection
from service.edge.keys import SERVICE, STORE
from service.fairness import seeds
from service.fairness.export import signed_export
from service.fairness.replay import replay_game
from service.fairness.seed_vault import SEALED_FIELD, SealedSeedError, SeedVault, load_or_create_key, seed_of_meta
from service.fairness.signing import NodeKey
from service.fairness.verify import verify_export
from service.play import decisions
from service.run.cli import main
from tests.service.conftest import (
    ENGINES,
    TEST_SEED_KEY,
    TEST_SIGNING_KEY,
    TEST_VAULT,
    create_tiny,
    kept_seed,
    started_tiny,
)
from tests.service.recorded import DATA, load_recorded
from tests.tinygame import TINY

LEGACY_GAMES = ("carcassonne", "castle", "castle_panic")


async def _seat(client, game_id, **body):
    return await client.post(f"/games/{game_id}/seats", json={"name": "ann", **body})


# --- the SHA-256 chain ------------------------------------------------------------------------


async def test_a_new_game_names_its_algorithms_and_chains_with_sha256_from_64_zeros(client):
    game_id, _ = await started_tiny(client)
    store = client.app[STORE]
    envelopes = await store.read(game_id, upcast=False)
    created = envelopes[0]
    assert (created.payload["draw"], created.payload["chain"]) == ("donjon-draw-2", "sha256")
    assert created.prev_hash == genesis("sha256") == "0" * 64
    assert all(len(e.hash) == 64 for e in envelopes)
    assert await store.verify_chain(game_id) == envelopes[-1].hash == (await store.head(game_id))[1]
    public = (await (await client.get(f"/games/{game_id}/events")).json())["events"][0]["payload"]
    assert (public["draw"], public["chain"]) == ("donjon-draw-2", "sha256")


async def test_the_append_script_refuses_a_batch_that_does_not_link_to_the_stored_head(client):
    game_id, _ = await started_tiny(client)
    store = client.app[STORE]
    version, head = await store.head(game_id)
    forged = NewEvent("drew", {"seat": 0, "card": 1})
    for link in ("f" * 64, None, head[:40]):
        with pytest.raises(ChainBroken, match="does not link"):
            await store.append(game_id, [forged], expected_version=version, command_id=None, actor=0, ts=1, link=link)
    assert await store.head(game_id) == (version, head)  # nothing appended
    result = await store.append(game_id, [forged], expected_version=version, command_id=None, actor=0, ts=1, link=head)
    assert len(result.head) == 64 and result.head == (await store.head(game_id))[1]
    await store.verify_chain(game_id)


async def test_a_node_whose_cached_head_is_unknown_reads_it_and_appends(client):
    game_id, _ = await started_tiny(client)
    service = client.app[SERVICE]
    projection = service.cached(game_id)
    service.cache._projections[game_id] = replace(projection, head_hash="")
    seat = TINY.waiting_for(projection.state)[0]
    await service.execute(game_id, seat, "c1", {"type": "draw", "args": {}})
    await client.app[STORE].verify_chain(game_id)


# --- contributions ----------------------------------------------------------------------------


async def test_each_seat_contributes_to_the_game_seed_and_sees_its_value_included(client):
    game_id = await create_tiny(client)
    first = await (await _seat(client, game_id, client_seed="ann-says-42")).json()
    second = await (await _seat(client, game_id)).json()
    assert first["seed_contribution"] == "ann-says-42"
    server_seed = await kept_seed(client.app, game_id)
    assert second["seed_contribution"] == seeds.server_contribution(server_seed, 1)
    body = await (await client.get(f"/games/{game_id}")).json()
    assert [s["seed_contribution"] for s in body["seats"]] == ["ann-says-42", second["seed_contribution"]]
    events = (await (await client.get(f"/games/{game_id}/events")).json())["events"]
    seats = [e["payload"] for e in events if e["type"] == "game.seat_taken"]
    assert [(s["seed_contribution"], s["seed_contribution_from"]) for s in seats] == [
        ("ann-says-42", "seat"), (second["seed_contribution"], "server")]
    # The setup drew from the game seed of both contributions, and replay re-derives it.
    envelopes = await client.app[SERVICE].events(game_id)
    before_last = GameProjection.fold(game_id, TINY, envelopes[:2])
    expected = decisions.seat_batch(before_last, 1, "ann", seed=server_seed, options={"target": 6},
                                    client_seed=None)
    assert [(e.type, e.payload) for e in expected] == [(e.type, e.payload) for e in envelopes[2:]]
    report = await replay_game(client.app[STORE], game_id, ENGINES, TEST_VAULT)
    assert report.ok, report.problems


def test_another_contribution_gives_another_game_seed_and_other_draws():
    server_seed = bytes(32)
    honest = seeds.game_seed(server_seed, ["a", "b"])
    assert honest != seeds.game_seed(server_seed, ["a", "c"]) != seeds.game_seed(bytes(31) + b"\x01", ["a", "b"])
    assert seeds.game_seed(server_seed, ["alice-seed", seeds.server_contribution(server_seed, 1)]).hex() == (
        "8e72f55913770c62773ab1c27d88ddab1a85db8b1deb32f7311beccbd9d1761c"
    )
    assert seeds.server_contribution(server_seed, 0) == (
        "63a7f25843fbb033ce53d9aee824de5ecf17eefed60a344a8965847af611c631"
    )
    with pytest.raises(ValueError, match="no seed contribution"):
        seeds.game_seed(server_seed, ["a", None])


@pytest.mark.parametrize("bad", ["", "has space", "x" * 129, 7, ["a"], "é", None])
async def test_a_bad_client_seed_is_refused_and_takes_no_seat(client, bad):
    game_id = await create_tiny(client)
    response = await _seat(client, game_id, client_seed=bad)
    assert response.status == 400
    body = await response.json()
    assert body["error"]["code"] == "bad_request" and "client_seed" in body["error"]["message"]
    assert await client.app[STORE].version(game_id) == 1


# --- seeds at rest ----------------------------------------------------------------------------


async def test_the_seed_is_sealed_in_the_meta_and_nowhere_in_clear(client):
    game_id, _ = await started_tiny(client)
    store = client.app[STORE]
    raw = await store.redis.hgetall(meta_key(game_id))
    seed = await kept_seed(client.app, game_id)
    assert b"seed" not in set(raw) and SEALED_FIELD.encode() in raw
    dump = b"".join(raw.values()) + b"".join(raw)
    assert seed.hex().encode() not in dump and seed not in dump
    meta = await store.get_meta(game_id)
    with pytest.raises(SealedSeedError, match="does not open"):
        seed_of_meta(game_id, meta, SeedVault(bytes(32)))
    with pytest.raises(SealedSeedError, match="does not open"):  # bound to its game: no copying
        TEST_VAULT.open("another", meta[SEALED_FIELD])
    running = await replay_game(store, game_id, ENGINES)
    assert not running.ok and "no seed key" in running.problems[0]
    assert (await replay_game(store, game_id, ENGINES, TEST_VAULT)).seed_source == "meta"


def test_the_node_key_comes_from_the_setting_or_a_private_file_in_the_keys_folder(tmp_path):
    data, keys = tmp_path / "data", tmp_path / "keys"
    assert load_or_create_key(TEST_SEED_KEY, data, keys) == bytes.fromhex(TEST_SEED_KEY)
    assert not (keys / "seed.key").exists() and not (data / "seed.key").exists()
    made = load_or_create_key(None, data, keys)
    path = keys / "seed.key"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and load_or_create_key(None, data, keys) == made
    assert not (data / "seed.key").exists()  # never in the data folder
    for bad in ("zz", "ab" * 31):
        with pytest.raises(ValueError, match="DONJON_SEED_KEY"):
            load_or_create_key(bad, data, keys)


def _key_at_once(folder: Path, ready: Any, keys: Any) -> None:
    ready.wait()
    try:
        keys.put(load_or_create_key(None, folder / "data", folder / "keys").hex())
    except Exception as exc:  # the race lost, as the workers of --workers N lost it
        keys.put(repr(exc))


def test_processes_that_make_the_node_key_at_once_all_get_the_one_key(tmp_path):
    """The workers of ``donjon serve --workers N`` start together on a new data folder."""
    context = multiprocessing.get_context("fork")
    ready, keys = context.Barrier(8), context.Queue()
    processes = [context.Process(target=_key_at_once, args=(tmp_path, ready, keys)) for _ in range(8)]
    for process in processes:
        process.start()
    found = [keys.get(timeout=30) for _ in processes]
    for process in processes:
        process.join()
    assert found == [(tmp_path / "keys" / "seed.key").read_text().strip()] * 8
    assert [path.name for path in (tmp_path / "keys").iterdir()] == ["seed.key"]  # no draft left behind


def test_a_bad_seed_key_stops_the_service_with_a_message(tmp_path, embedded_redis_url):
    from service.ops.settings import Secret, Settings, SettingsError
    from service.run.app import create_app

    with pytest.raises(SettingsError, match="DONJON_SEED_KEY"):
        create_app(Settings(redis_url=Secret(embedded_redis_url), data_dir=tmp_path, seed_key=Secret("nope")))


# --- games recorded before (random.Random, SHA-1) ---------------------------------------------


async def _load_legacy(store, name: str) -> dict:
    return await load_recorded(store, f"legacy_{name}.json")


@pytest.mark.parametrize("name", LEGACY_GAMES)
async def test_a_game_recorded_before_donjon_draw_1_still_replays(store, name):
    recorded = await _load_legacy(store, name)
    game_id = recorded["game_id"]
    envelopes = await store.read(game_id, upcast=False)
    assert "draw" not in envelopes[0].payload and len(envelopes[-1].hash) == 40
    await store.verify_chain(game_id)
    report = await replay_game(store, game_id, games.default_engines())
    assert report.problems == [] and report.status == "finished"
    assert report.batches_checked == len({e["version"] for e in recorded["events"] if e["command"] is not None})


@pytest.mark.parametrize("name", LEGACY_GAMES)
async def test_an_old_game_exports_signed_and_verifies_offline(store, name):
    recorded = await _load_legacy(store, name)
    key = NodeKey(bytes.fromhex(TEST_SIGNING_KEY))
    exported = await signed_export(store, recorded["game_id"], recorded["game"], key)
    assert exported["chain"]["algorithm"].startswith("sha1(") and exported["chain"]["genesis"] == "0" * 40
    report = verify_export(json.loads(json.dumps(exported)), games.default_engines(), key=key.public_hex)
    assert report.ok, report.problems


async def test_donjon_replay_checks_an_old_game_in_the_store(store, embedded_redis_url, monkeypatch, capsys, tmp_path):
    recorded = await _load_legacy(store, "carcassonne")
    monkeypatch.setenv("DONJON_REDIS_URL", embedded_redis_url)
    monkeypatch.setenv("DONJON_SEED_KEY", TEST_SEED_KEY)
    assert await asyncio.to_thread(main, ["replay", recorded["game_id"]]) == 0
    assert "OK:" in capsys.readouterr().out


# --- games recorded under donjon-draw-1 (each decision drawn from its stream version) ----------

DRAW1_GAMES = sorted(path.name for path in DATA.glob("draw1_*.json"))


def test_every_engine_has_donjon_draw_1_games_on_record():
    recorded = [json.loads((DATA / name).read_text()) for name in DRAW1_GAMES]
    assert {game["game"] for game in recorded} == {"carcassonne", "castle", "castle_panic"}
    assert all(game["events"][0]["payload"]["draw"] == "donjon-draw-1" for game in recorded)


@pytest.mark.parametrize("filename", DRAW1_GAMES)
async def test_a_donjon_draw_1_game_replays_and_verifies_from_its_export(store, filename):
    recorded = await load_recorded(store, filename)
    game_id = recorded["game_id"]
    await store.verify_chain(game_id)
    report = await replay_game(store, game_id, games.default_engines())
    assert report.problems == [] and report.status == "finished"
    assert report.batches_checked == len({e["version"] for e in recorded["events"] if e["command"] is not None})
    key = NodeKey(bytes.fromhex(TEST_SIGNING_KEY))
    exported = await signed_export(store, game_id, recorded["game"], key)
    assert exported["chain"]["head"] == recorded["head"]
    verified = verify_export(json.loads(json.dumps(exported)), games.default_engines(), key=key.public_hex)
    assert verified.ok, verified.problems
