"""``GET /games/{id}/export``: a finished game's log with its stored bodies; refused before the end."""

from __future__ import annotations

import base64
import hashlib

import msgpack

from events.chain import genesis, verify_bodies
from service.edge.keys import DEPLOYMENT_KEYS
from service.fairness.export import EXPORT_FORMAT, signed_bytes
from tests.service.conftest import started_tiny
from tests.service.test_replay import finished_game


async def test_the_export_of_a_finished_game_verifies_chain_and_seed_commitment(client):
    game_id, _ = await finished_game(client)
    response = await client.get(f"/games/{game_id}/export")
    assert response.status == 200, await response.text()
    export = await response.json()
    assert export["format"] == EXPORT_FORMAT and export["id"] == game_id and export["game"] == "tiny"
    entries = [(e["version"], base64.b64decode(e["body"]), e["prev_hash"], e["hash"]) for e in export["events"]]
    assert entries[0][2] == genesis("sha256") == export["chain"]["genesis"]  # a game created since v1.2
    assert verify_bodies(game_id, entries) == export["chain"]["head"]
    game = await (await client.get(f"/games/{game_id}")).json()
    assert export["chain"]["version"] == len(entries) == game["version"]
    bodies = [msgpack.unpackb(body, raw=False) for _, body, _, _ in entries]
    assert bodies[0]["type"] == "game.created" and bodies[-1]["type"] == "game.finished"
    assert bodies[-1]["payload"]["seed"] == export["seed"]
    assert hashlib.sha256(bytes.fromhex(export["seed"])).hexdigest() == bodies[0]["payload"]["seed_commitment"]
    signer = await client.app[DEPLOYMENT_KEYS].signer()
    assert export["signature"]["public_key"] == signer.public_hex  # signed by the deployment's key
    assert isinstance(export["exported_at"], int) and export["exported_at"] > 0
    assert b'"signature"' not in signed_bytes(export)


async def test_a_running_game_is_not_exported_and_its_seed_stays_secret(client):
    game_id, _ = await started_tiny(client)
    response = await client.get(f"/games/{game_id}/export")
    assert response.status == 409
    body = await response.json()
    assert body["error"]["code"] == "not_finished"
    assert "seed" not in await response.text()


async def test_exporting_an_unknown_game_is_not_found(client):
    response = await client.get("/games/nosuchgame/export")
    assert response.status == 404 and (await response.json())["error"]["code"] == "not_found"
