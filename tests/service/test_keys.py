"""One signing key per deployment, pinned verification and no downgrades (issue 21, items 1-5).

The keyring lives in the store (``donjon:keys``), so every test that rotates a key runs its own
Valkey (``valkey``): the session's server is shared by every other test app, which all sign with
the tests' key.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest

import games
from events.chain import link_hash
from events.keyring import KEYRING_KEY
from events.store import EventStore
from service.edge.keys import DEPLOYMENT_KEYS
from service.fairness.deployment_keys import DeploymentKeys, KeyringError
from service.fairness.seed_vault import SeedVault
from service.fairness.signing import NodeKey, key_id
from service.fairness.trusted_keys import TrustedKeys
from service.fairness.verify import LEGACY_WARNING, STRONG_SCHEMES_SINCE_MS, parse_export, verify_export
from service.ops.settings import Secret
from service.run.app import create_app
from service.run.cli import main
from tests.service.conftest import ENGINES, TEST_SIGNING_KEY, TEST_VAULT, settings_for
from tests.service.contract import openapi_trace

ROOT = Path(__file__).resolve().parents[2]
JS_DATA = ROOT / "clients" / "js" / "test" / "data"
NODE = NodeKey(bytes.fromhex(TEST_SIGNING_KEY))
OTHER = NodeKey(bytes([7]) * 32)
EVERY_GAME = {**games.default_engines(), **ENGINES}
"""The three games (the fixtures' exports) and the tiny game (the test apps')."""


def _now() -> int:
    return int(time.time() * 1000)


async def _store(url: str) -> EventStore:
    return await EventStore.connect(url, cluster=False)


async def finished_bot_game(client: Any) -> str:
    """A tiny game whose two seats are bots, played to its end by the node."""
    created = await client.post("/games", json={"game": "tiny", "seats": 2, "bots_only": True,
                                              "bots": {"0": "random", "1": "first"}})
    assert created.status == 201, await created.text()
    game_id = (await created.json())["id"]
    for _ in range(400):
        if (await (await client.get(f"/games/{game_id}")).json())["status"] == "finished":
            return game_id
        await asyncio.sleep(0.025)
    raise AssertionError(f"game {game_id} did not finish")


async def export_of(client: Any, game_id: str) -> dict[str, Any]:
    response = await client.get(f"/games/{game_id}/export")
    assert response.status == 200, await response.text()
    return await response.json()


@pytest.fixture
def own_client(aiohttp_client: Any, valkey: str) -> Any:
    """A test app on a Valkey of the test's own, with ``DONJON_SIGNING_KEY`` as given (none by default)."""

    async def make(**overrides: Any) -> Any:
        overrides.setdefault("signing_key", None)
        app = create_app(settings_for(valkey, **overrides), engines=ENGINES)
        return await aiohttp_client(app, trace_configs=[openapi_trace()])

    return make


async def test_two_nodes_starting_at_once_on_a_new_store_end_with_one_sealed_key(valkey):
    store = await _store(valkey)
    try:
        opened = await asyncio.gather(*(DeploymentKeys.open(store.server, TEST_VAULT, _now) for _ in range(4)))
        listings = [await keys.listing() for keys in opened]
        assert all(listing == listings[0] for listing in listings)
        (only,) = listings[0]["keys"]
        assert only["status"] == "current" and only["signed_until"] is None and only["signed_from"] > 0
        assert only["id"] == key_id(bytes.fromhex(only["public_key"]))
        assert listings[0]["legacy_games_before"] <= _now()
        stored = (await store.redis.get(KEYRING_KEY)).decode()
        assert "private_sealed" in stored and only["public_key"] in stored
        signer = await opened[0].signer()
        assert signer.public_hex == only["public_key"] and bytes(signer._private.private_bytes_raw()).hex() not in stored
        with pytest.raises(KeyringError, match="seed key"):  # a node with another seed key cannot sign
            await DeploymentKeys.open(store.server, SeedVault(bytes(32)), _now)
    finally:
        await store.close()


async def test_the_keyring_is_kept_on_a_cluster_too(cluster_redis_url):
    store = await EventStore.connect(cluster_redis_url, cluster=True)
    try:
        keys = await DeploymentKeys.open(store.server, TEST_VAULT, _now, imported=bytes.fromhex(TEST_SIGNING_KEY))
        assert NODE.public_hex in [key["public_key"] for key in (await keys.listing())["keys"]]
    finally:
        await store.close()


async def test_get_keys_lists_the_key_and_a_rotation_retires_it_while_old_exports_keep_verifying(
    own_client, valkey, monkeypatch, tmp_path, capsys
):
    client = await own_client(signing_key=None)
    first = await (await client.get("/keys")).json()
    assert [key["status"] for key in first["keys"]] == ["current"]
    old = await export_of(client, await finished_bot_game(client))
    assert old["format"] == "donjon.export/2" and old["signature"]["key_id"] == first["keys"][0]["id"]

    monkeypatch.setenv("DONJON_REDIS_URL", valkey)
    monkeypatch.delenv("DONJON_SIGNING_KEY")
    assert await asyncio.to_thread(main, ["keys", "rotate"]) == 0
    rotated = json.loads(capsys.readouterr().out)
    assert [key["status"] for key in rotated["keys"]] == ["current", "retired"]
    assert rotated["keys"][1]["id"] == first["keys"][0]["id"] and rotated["keys"][1]["signed_until"] > 0
    assert rotated["legacy_games_before"] == first["legacy_games_before"]
    assert await asyncio.to_thread(main, ["keys", "list"]) == 0
    assert json.loads(capsys.readouterr().out) == rotated

    new = await _export_by_the_new_key(client, rotated["keys"][0]["id"])
    assert await (await client.get("/keys")).json() == rotated
    listing = tmp_path / "keys.json"
    listing.write_text(json.dumps(rotated))
    for export in (old, new):
        path = tmp_path / f"{export['id']}.json"
        path.write_text(json.dumps(export))
        assert await asyncio.to_thread(main, ["verify", str(path), "--keys", str(listing)], EVERY_GAME) == 0
        assert await asyncio.to_thread(main, ["verify", str(path), "--keys", str(client.make_url("/keys"))],
                                       EVERY_GAME) == 0
    capsys.readouterr()


async def _export_by_the_new_key(client: Any, new_id: str) -> dict[str, Any]:
    """An export signed after a rotation another process made: the node picks the new key up
    within a few seconds."""
    game_id = await finished_bot_game(client)
    for _ in range(80):
        export = await export_of(client, game_id)
        if export["signature"]["key_id"] == new_id:
            return export
        await asyncio.sleep(0.1)
    raise AssertionError("the node still signs with the retired key")


async def test_a_retired_key_signs_nothing_after_its_retirement(own_client, valkey):
    """An operator who kept a retired key (or reads the keyring with the seed key) cannot pass
    off a new file as signed before the rotation, nor a keyring-made key's file as a /1 one."""
    client = await own_client(signing_key=Secret(TEST_SIGNING_KEY))
    export = await export_of(client, await finished_bot_game(client))
    assert export["signature"]["public_key"] == NODE.public_hex
    rotated = await client.app[DEPLOYMENT_KEYS].rotate()
    trusted = TrustedKeys.from_listing(rotated)
    assert verify_export(export, EVERY_GAME, trusted=trusted).pinned
    retired_at = rotated["keys"][1]["signed_until"]
    late = NODE.sign_export({**export, "exported_at": retired_at + 1})
    assert verify_export(late, EVERY_GAME, trusted=trusted).problems[0].startswith(
        f"signature: the signing key was retired at {retired_at}")
    current = rotated["keys"][0]
    store = await _store(valkey)
    try:
        keyring = json.loads((await store.redis.get(KEYRING_KEY)).decode())
    finally:
        await store.close()
    sealed = next(entry["private_sealed"] for entry in keyring["keys"] if entry["id"] == current["id"])
    new_key = NodeKey(TEST_VAULT.open(current["id"], sealed, "signing-key"))
    as_v1 = new_key.sign_export({**{k: v for k, v in export.items() if k != "exported_at"},
                                 "format": "donjon.export/1"})
    assert verify_export(as_v1, EVERY_GAME, trusted=trusted).problems[0] == (
        "signature: a key made since donjon.export/2 signs no donjon.export/1 file")
    early = new_key.sign_export({**export, "exported_at": current["signed_from"] - 1})
    assert "before its signing key existed" in verify_export(early, EVERY_GAME, trusted=trusted).problems[0]


@pytest.fixture(scope="module")
def honest() -> dict[str, Any]:
    return parse_export((JS_DATA / "draw2-carcassonne.json").read_text())


def test_a_key_id_that_is_not_the_public_keys_is_a_mismatch(honest):
    forged = OTHER.sign_export(honest)
    forged["signature"]["key_id"] = NODE.id  # borrows the deployment's name
    report = verify_export(forged, EVERY_GAME)
    assert report.problems[0] == (f"signature: the key_id '{NODE.id}' is not {OTHER.id}, the id of the signing key")
    pinned = verify_export(forged, EVERY_GAME, trusted=TrustedKeys.from_key(NODE.public_hex))
    assert pinned.problems[0].startswith("signature: the key_id")


async def test_verify_exit_codes_say_whether_the_signer_is_pinned(honest, tmp_path, capsys):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(honest))
    listing = tmp_path / "keys.json"
    listing.write_text(json.dumps({"keys": [{"id": NODE.id, "algorithm": "ed25519", "public_key": NODE.public_hex,
                                             "status": "current", "signed_from": None, "signed_until": None}],
                                   "legacy_games_before": None}))
    cases = [
        ([], 3, "UNPINNED"),
        (["--key", NODE.public_hex], 0, "one of the trusted keys given"),
        (["--keys", str(listing)], 0, "one of the trusted keys given"),
        (["--key", OTHER.public_hex], 1, "MISMATCH  signature: the file is signed by key"),
        (["--key", "xyz"], 2, ""),
        (["--keys", str(tmp_path / "missing.json")], 2, ""),
        (["--keys", str(path)], 2, ""),  # an export is not a key listing
        (["--key", NODE.public_hex, "--keys", str(listing)], 2, ""),
    ]
    for flags, code, said in cases:
        assert main(["verify", str(path), *flags]) == code, flags
        assert said in capsys.readouterr().out, flags
        assert main(["verify", str(path), "--json", *flags]) == code, flags
        verdict = json.loads(capsys.readouterr().out)  # exactly one JSON object, whatever happened
        assert verdict["ok"] is (code in (0, 3)) and (code != 3 or verdict["outcome"] == "unpinned"), flags


def _rechained(export: dict[str, Any], edit: Any, algorithm: str) -> dict[str, Any]:
    """``export`` with ``edit(bodies)`` applied, re-chained with ``algorithm`` and re-signed by the
    deployment's own key (an operator forging a downgrade)."""
    tampered = copy.deepcopy(export)
    bodies = [msgpack.unpackb(base64.b64decode(e["body"]), raw=False) for e in tampered["events"]]
    edit(bodies)
    prev = "0" * (64 if algorithm == "sha256" else 40)
    tampered["chain"].update(genesis=prev, algorithm=f"{algorithm}(prev_hash_hex || msgpack_body)")
    for event, body in zip(tampered["events"], bodies, strict=True):
        raw = msgpack.packb(body, use_bin_type=True)
        event["body"], event["prev_hash"] = base64.b64encode(raw).decode(), prev
        event["hash"] = prev = link_hash(prev, raw, algorithm)
    tampered["chain"]["head"] = prev
    return NODE.sign_export(tampered)


def _drop(field: str) -> Any:
    return lambda bodies: bodies[0]["payload"].pop(field)


@pytest.mark.parametrize(("what", "edit", "algorithm"), [
    ("no chain, re-chained with SHA-1", _drop("chain"), "sha1"),
    ("no draw", _drop("draw"), "sha256"),
    ("a legacy draw", lambda bodies: bodies[0]["payload"].update(draw="python-random"), "sha256"),
])
def test_a_downgrade_of_a_recent_game_is_refused(honest, what, edit, algorithm):
    forged = _rechained(honest, edit, algorithm)
    report = verify_export(forged, EVERY_GAME, key=NODE.public_hex)
    assert report.problems[0].startswith("scheme: "), (what, report.problems)
    backdated_by_the_listing = _rechained(honest, edit, algorithm)
    listing = {"keys": [{"public_key": NODE.public_hex, "signed_from": None, "signed_until": None}],
               "legacy_games_before": 1_000}
    assert verify_export(backdated_by_the_listing, EVERY_GAME, trusted=TrustedKeys.from_listing(listing)).problems[
        0].startswith("scheme: ")


def test_a_real_legacy_game_verifies_with_the_warning_on_every_line(tmp_path, capsys):
    path = JS_DATA / "legacy-castle.json"
    report = verify_export(parse_export(path.read_text()), EVERY_GAME, key=NODE.public_hex)
    assert report.ok and report.legacy and report.as_dict()["warnings"] == [LEGACY_WARNING]
    assert main(["verify", str(path), "--key", NODE.public_hex], EVERY_GAME) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines and all(LEGACY_WARNING in line for line in lines)
    created = msgpack.unpackb(base64.b64decode(json.loads(path.read_text())["events"][0]["body"]), raw=False)
    assert created["ts"] < STRONG_SCHEMES_SINCE_MS and "chain" not in created["payload"]


async def test_get_keys_answers_store_unavailable_while_the_store_is_down(aiohttp_client, tmp_path):
    from events.embedded import EmbeddedServer
    from service.fairness.deployment_keys import REFRESH_MS

    server = EmbeddedServer(tmp_path / "valkey", fsync="everysec")
    await server.start_async()
    try:
        client = await aiohttp_client(create_app(settings_for(server.url), engines=ENGINES),
                                      trace_configs=[openapi_trace()])
        assert (await client.get("/keys")).status == 200
        await asyncio.to_thread(server.kill)
        await asyncio.sleep(REFRESH_MS / 1000 + 0.2)  # the keyring the node read is due to be read again
        answer = await client.get("/keys")
        assert answer.status == 503 and (await answer.json())["error"]["code"] == "store_unavailable"
    finally:
        await asyncio.to_thread(server.stop)


async def test_nodes_importing_one_signing_key_at_once_import_it_once(valkey):
    """``donjon serve --workers N`` with ``DONJON_SIGNING_KEY`` on a store whose keyring lacks it."""
    store = await _store(valkey)
    try:
        first = await DeploymentKeys.open(store.server, TEST_VAULT, _now)
        opened = await asyncio.gather(*(
            DeploymentKeys.open(store.server, TEST_VAULT, _now, imported=bytes.fromhex(TEST_SIGNING_KEY))
            for _ in range(6)
        ))
        listing = await opened[0].listing()
        assert [key["id"] for key in listing["keys"]] == [NODE.id, (await first.signer()).id]
        assert [key["status"] for key in listing["keys"]] == ["current", "retired"]
        for keys in opened:
            assert (await keys.signer()).id == NODE.id
    finally:
        await store.close()
