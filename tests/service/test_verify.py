"""Signed exports and ``donjon verify``: a finished game of every real game, exported from the
served store, verifies in a process that has no store; every tampering is refused, naming why."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack
import pytest

import games
from events.chain import link_hash
from service.edge.keys import DEPLOYMENT_KEYS, STORE
from service.errors import ServiceError
from service.fairness.draw_schemes import LegacyRandom
from service.fairness.export import export_game
from service.fairness.signing import NodeKey, check_signature
from service.fairness.verify import DuplicateKey, parse_export, strict_base64, verify_export
from service.run.cli import main
from tests.service.conftest import TEST_SIGNING_KEY, hello
from tests.service.players import Player

ENGINES = games.default_engines()
FAST = {"ws_rate": 10_000, "ws_burst": 10_000}
ROOT = Path(__file__).resolve().parents[2]
NODE_PUBLIC = NodeKey(bytes.fromhex(TEST_SIGNING_KEY)).public_hex


async def finished_game(client: Any, name: str, client_seed: str | None = "fair-dice-7") -> str:
    """A game of ``name`` played to its end: a human in seat 0 (with ``client_seed``), random bots."""
    engine = ENGINES[name]
    seats = max(2, engine.min_seats)
    bots = {str(seat): "random" for seat in range(1, seats)}
    created = await client.post("/games", json={"game": name, "seats": seats, "bots": bots})
    game_id = (await created.json())["id"]
    body = {"name": "human"} if client_seed is None else {"name": "human", "client_seed": client_seed}
    seated = await (await client.post(f"/games/{game_id}/seats", json=body)).json()
    ws, first = await hello(client, game_id, seated["token"])
    await Player(ws, first, LegacyRandom(3), f"{name}-human").play(max_commands=3000, timeout=10)
    await ws.close()
    return game_id


async def signed_export(client: Any, game_id: str, name: str) -> dict[str, Any]:
    signer = await client.app[DEPLOYMENT_KEYS].signer()
    return signer.sign_export(await export_game(client.app[STORE], game_id, name))


def unstamped(export: dict[str, Any]) -> dict[str, Any]:
    """An export without what differs between two exports of one game: when, and so the signature."""
    return {name: value for name, value in export.items() if name not in ("exported_at", "signature")}


def rechained(export: dict[str, Any], edit: Any) -> dict[str, Any]:
    """``export`` with ``edit(bodies)`` applied to its decoded bodies, every hash recomputed (a forger
    who rewrites the chain), and the old signature kept."""
    tampered = copy.deepcopy(export)
    bodies = [msgpack.unpackb(base64.b64decode(e["body"]), raw=False) for e in tampered["events"]]
    edit(bodies)
    algorithm = "sha256" if len(tampered["chain"]["genesis"]) == 64 else "sha1"
    prev = tampered["chain"]["genesis"]
    for event, body in zip(tampered["events"], bodies, strict=True):
        raw = msgpack.packb(body, use_bin_type=True)
        event["body"], event["prev_hash"] = base64.b64encode(raw).decode(), prev
        event["hash"] = prev = link_hash(prev, raw, algorithm)
    tampered["chain"]["head"] = prev
    return tampered


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", sorted(ENGINES))
async def test_a_finished_game_of_each_game_verifies_offline(make_client, name, tmp_path, embedded_redis_url,
                                                             monkeypatch):
    client = await make_client(engines=ENGINES, **FAST)
    game_id = await finished_game(client, name)
    keys = await (await client.get("/keys")).json()
    assert keys["keys"][0]["public_key"] == NODE_PUBLIC and keys["keys"][0]["status"] == "current"
    # donjon export, from the store the node wrote
    monkeypatch.setenv("DONJON_REDIS_URL", embedded_redis_url)
    monkeypatch.setenv("DONJON_SIGNING_KEY", TEST_SIGNING_KEY)
    path = tmp_path / f"{name}.json"
    assert await asyncio.to_thread(main, ["export", game_id, "-o", str(path)]) == 0
    export = json.loads(path.read_text())
    assert unstamped(export) == unstamped(await signed_export(client, game_id, name))
    assert unstamped(export) == unstamped(await (await client.get(f"/games/{game_id}/export")).json())  # the route too
    assert export["format"] == "donjon.export/2" and export["signature"]["public_key"] == NODE_PUBLIC
    assert export["chain"]["algorithm"] == "sha256(prev_hash_hex || msgpack_body)"
    # donjon verify, in a process with no store and no key: nothing but the file
    bare = {k: v for k, v in os.environ.items() if not k.startswith("DONJON_")}
    command = [sys.executable, "-m", "service", "verify", str(path), "--key", NODE_PUBLIC]
    done = await asyncio.to_thread(subprocess.run, command, cwd=tmp_path, env={**bare, "PYTHONPATH": str(ROOT)},
                                   capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: signature" in done.stdout and not (tmp_path / "donjon-data").exists()
    report = verify_export(export, ENGINES, key=NODE_PUBLIC)
    assert report.ok and report.batches_checked > 3 and report.summary == export_summary(export)


def export_summary(export: dict[str, Any]) -> Any:
    return msgpack.unpackb(base64.b64decode(export["events"][-1]["body"]), raw=False)["payload"]["summary"]


@pytest.fixture(scope="module")
def carcassonne_export() -> dict[str, Any]:
    """The export the JavaScript verifier is tested on (clients/js/test/data), made by this side."""
    return json.loads((ROOT / "clients" / "js" / "test" / "data" / "carcassonne-export.json").read_text())


JS_EXPORTS = sorted((ROOT / "clients" / "js" / "test" / "data").glob("*.json"))


def test_an_export_of_a_game_recorded_before_sealing_still_verifies():
    """The JavaScript verifier's fixture of the version before sealing at rest: bodies without
    sealed parts, a game.created that names none."""
    old = json.loads((ROOT / "clients" / "js" / "test" / "data" / "carcassonne-export-unsealed.json").read_text())
    assert "hidden" not in msgpack.unpackb(base64.b64decode(old["events"][0]["body"]), raw=False)["payload"]
    assert verify_export(old, ENGINES, key=NODE_PUBLIC).ok


@pytest.mark.parametrize("path", JS_EXPORTS, ids=lambda path: path.stem)
def test_the_javascript_verifiers_exports_verify_here(path):
    """The files ``python -m tests.service.make_export_fixture`` wrote for the JavaScript tests."""
    report = verify_export(parse_export(path.read_text()), ENGINES, key=NODE_PUBLIC)
    assert report.ok, report.problems
    assert len(JS_EXPORTS) == 6


def test_the_javascript_verifiers_decks_are_the_rules_decks_and_the_pages():
    from tests.service.make_decks import OUT, doc_lines, source

    assert OUT.read_text(encoding="utf-8") == source(), "run python -m tests.service.make_decks"
    page = (ROOT / "docs" / "fairness.md").read_text(encoding="utf-8")
    for name, line in doc_lines().items():
        assert line in page, f"docs/fairness.md lacks {name}: {line[:200]}"


def test_a_reshuffle_rewritten_is_a_mismatch_of_its_batch_and_the_deals_after_it_crash_nothing():
    """Under donjon-draw-2 a forged deck (a reshuffle that keeps a brick) makes the deals that follow
    name cards the forged state no longer holds: each batch after it is a finding, not a crash."""
    export = parse_export((ROOT / "clients" / "js" / "test" / "data" / "draw2-castle_panic.json").read_text())

    def keep_the_brick(bodies: list[dict[str, Any]]) -> None:
        next(b for b in bodies if b["type"] == "deck_reshuffled")["payload"]["removed"] = []

    report = verify_export(rechained(export, keep_the_brick), ENGINES)
    reshuffle = next(e["version"] for e in map(_body, export["events"]) if e["type"] == "deck_reshuffled")
    first, last = map(int, report.problems[0].removeprefix("re-run: versions ").split(":")[0].split("-"))
    assert first <= reshuffle <= last, report.problems[0]


def _body(event: dict[str, Any]) -> dict[str, Any]:
    return msgpack.unpackb(base64.b64decode(event["body"]), raw=False)


def _flip_a_byte(export: dict[str, Any]) -> dict[str, Any]:
    tampered = copy.deepcopy(export)
    raw = bytearray(base64.b64decode(tampered["events"][5]["body"]))
    raw[-1] ^= 1
    tampered["events"][5]["body"] = base64.b64encode(bytes(raw)).decode()
    return tampered


def _swap_events(export: dict[str, Any]) -> dict[str, Any]:
    tampered = copy.deepcopy(export)
    tampered["events"][6], tampered["events"][7] = tampered["events"][7], tampered["events"][6]
    return tampered


def _swap_and_rechain(export: dict[str, Any]) -> dict[str, Any]:
    def swap(bodies: list[dict[str, Any]]) -> None:
        moves = [i for i, b in enumerate(bodies) if b["type"] == "tile_drawn"]
        a, b = moves[1], moves[2]
        bodies[a]["payload"], bodies[b]["payload"] = bodies[b]["payload"], bodies[a]["payload"]
    return rechained(export, swap)


def _change_seed(export: dict[str, Any]) -> dict[str, Any]:
    def reseed(bodies: list[dict[str, Any]]) -> None:
        bodies[-1]["payload"]["seed"] = "00" * 32
    tampered = rechained(export, reseed)
    tampered["seed"] = "00" * 32
    return tampered


def _wrong_contribution(export: dict[str, Any]) -> dict[str, Any]:
    def rewrite(bodies: list[dict[str, Any]]) -> None:
        seat = next(b for b in bodies if b["type"] == "game.seat_taken" and b["payload"]["seat"] == 1)
        seat["payload"]["seed_contribution"] = "0" * 64
    return rechained(export, rewrite)


def _wrong_client_seed(export: dict[str, Any]) -> dict[str, Any]:
    def rewrite(bodies: list[dict[str, Any]]) -> None:
        seat = next(b for b in bodies if b["type"] == "game.seat_taken" and b["payload"]["seat"] == 0)
        seat["payload"]["seed_contribution"] = "loaded-dice"
    return rechained(export, rewrite)


def _resigned(export: dict[str, Any]) -> dict[str, Any]:
    return NodeKey(bytes(32)).sign_export(export)


def _edited_field(export: dict[str, Any]) -> dict[str, Any]:
    tampered = copy.deepcopy(export)
    tampered["id"] = tampered["id"] + "x"
    return tampered


TAMPERINGS = {
    "one byte in an event": (_flip_a_byte, "chain: game '{id}': hash chain broken at version 6: hash does not match"),
    "a swapped event": (_swap_events, "chain: game '{id}': hash chain broken at version 7: found version 8"),
    "swapped draws, chain rewritten": (_swap_and_rechain, "re-run: versions "),
    "a changed seed": (_change_seed, "re-run: the seed (and secret options) do not match game.created's"),
    "a wrong seat contribution": (_wrong_contribution, "re-run: version 2: seat 1's seed contribution '000"),
    "a wrong client seed": (
        _wrong_client_seed,
        "re-run: version 3: seat 0's seed contribution 'loaded-dice' is not the client_seed its seat sent",
    ),
    "re-signed with another key": (_resigned, "signature: the file is signed by key "),
    "a field edited after signing": (_edited_field, "chain: game '{id}x': hash chain broken at version 1: body names"),
}


@pytest.mark.parametrize("case", sorted(TAMPERINGS))
def test_every_tampering_is_refused_with_its_reason(carcassonne_export, case, tmp_path):
    tamper, reason = TAMPERINGS[case]
    assert verify_export(carcassonne_export, ENGINES, key=NODE_PUBLIC).ok
    report = verify_export(tamper(carcassonne_export), ENGINES, key=NODE_PUBLIC)
    assert not report.ok and report.problems[0].startswith(reason.format(id=carcassonne_export["id"])), (
        report.problems
    )
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(tamper(carcassonne_export)))
    done = subprocess.run([sys.executable, "-m", "service", "verify", str(path), "--key", NODE_PUBLIC], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout.startswith(f"MISMATCH  {report.problems[0]}"), done.stdout


def test_a_changed_signature_and_an_unsigned_file_are_refused(carcassonne_export):
    unsigned = {k: v for k, v in carcassonne_export.items() if k != "signature"}
    assert verify_export(unsigned, ENGINES).problems[0] == "signature: the file is not signed"
    forged = copy.deepcopy(carcassonne_export)
    forged["signature"]["value"] = base64.b64encode(bytes(64)).decode()
    assert check_signature(forged) == "the signature does not match the file's contents"
    unpinned = verify_export(carcassonne_export, ENGINES)
    assert unpinned.ok and not unpinned.pinned  # every check but who signed


def test_verify_reads_only_a_json_file(tmp_path):
    path = tmp_path / "not.json"
    path.write_text("{")
    assert main(["verify", str(path)]) == 1  # a file that is not JSON does not check
    assert main(["verify", str(tmp_path / "missing.json")]) == 2  # a file that cannot be read


def test_a_file_naming_a_key_twice_is_refused_before_any_check(carcassonne_export, tmp_path, capsys):
    """A parser that keeps the first value and one that keeps the last would check different files."""
    text = json.dumps(carcassonne_export)
    doubled = text.replace('"seed": ', f'"seed": "{"00" * 32}", "seed": ', 1)
    assert json.loads(doubled) == carcassonne_export  # Python's own json keeps the last: it would verify
    path = tmp_path / "doubled.json"
    path.write_text(doubled)
    assert main(["verify", str(path), "--key", NODE_PUBLIC]) == 1
    assert "MISMATCH  format: " in (out := capsys.readouterr().out) and "the key 'seed' appears twice" in out
    with pytest.raises(DuplicateKey):
        parse_export('{"a": {"b": 1, "b": 1}}')
    assert parse_export(text) == carcassonne_export


@pytest.mark.parametrize("body", ["QR==", "QQ", "QQ==\n", " QQ==", "Q=Q=", "QQ==QQ==", "-_8=", 7])
def test_a_body_in_loose_base64_is_refused(carcassonne_export, body):
    assert strict_base64("QQ==") == b"A"
    with pytest.raises(ValueError):
        strict_base64(json.loads(json.dumps(body)) if isinstance(body, str) else body)
    tampered = copy.deepcopy(carcassonne_export)
    good = tampered["events"][3]["body"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = len(good.rstrip("=")) - 1  # its unused low bits set: the same bytes, another text
    assert good.endswith("=")
    loose = good[:last] + alphabet[alphabet.index(good[last]) ^ 1] + good[last + 1:]
    tampered["events"][3]["body"] = loose
    assert base64.b64decode(loose) == base64.b64decode(good)  # a lenient decoder reads the same bytes
    assert verify_export(tampered, ENGINES, key=NODE_PUBLIC).problems[0] == (
        "format: an event's body is not strict base64")


async def test_a_running_game_is_not_exported(client, monkeypatch, embedded_redis_url, capsys):
    from tests.service.conftest import started_tiny

    game_id, _ = await started_tiny(client)
    with pytest.raises(ServiceError, match="has not finished"):
        await export_game(client.app[STORE], game_id, "tiny")
    assert (await client.get(f"/games/{game_id}/export")).status == 409
    monkeypatch.setenv("DONJON_REDIS_URL", embedded_redis_url)
    assert await asyncio.to_thread(main, ["export", game_id]) == 1
    assert "has not finished" in capsys.readouterr().err
