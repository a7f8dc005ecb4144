"""Two ``donjon serve`` processes on one store, started at once with no signing key setting, sign
with one deployment key: the same ``GET /keys`` on both, an export from either verifies against
either's ``/keys``, and after ``donjon keys rotate`` old exports still verify while new ones are
signed by the new key (issue 21, item 3)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.service.nodes import LAUNCH_EVERY_GAME, Nodes
from tests.service.test_crash_recovery import ROOT, env

pytestmark = pytest.mark.timeout(300)


async def _finished_export(session: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    """The export of a tiny game two bots of the node at ``base`` played to its end."""
    body = {"game": "tiny", "seats": 2, "bots_only": True, "bots": {"0": "random", "1": "first"}}
    async with session.post(f"{base}/games", json=body) as response:
        assert response.status == 201, await response.text()
        game_id = (await response.json())["id"]
    for _ in range(600):
        async with session.get(f"{base}/games/{game_id}/export") as response:
            if response.status == 200:
                return await response.json()
            assert response.status == 409, await response.text()
        await asyncio.sleep(0.05)
    raise AssertionError(f"game {game_id} did not finish on {base}")


async def _keys(session: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    async with session.get(f"{base}/keys") as response:
        return await response.json()


def _verify(path: Path, keys_url: str) -> subprocess.CompletedProcess[str]:
    launch = LAUNCH_EVERY_GAME
    return subprocess.run([sys.executable, "-c", launch, "verify", str(path), "--keys", keys_url],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)


def _rotate(url: str) -> dict[str, Any]:
    environ = {**env(), "DONJON_REDIS_URL": url, "DONJON_SIGNING_KEY": ""}
    done = subprocess.run([sys.executable, "-m", "service", "keys", "rotate"], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


async def _signed_by(session: aiohttp.ClientSession, base: str, key_id: str) -> dict[str, Any]:
    """An export from ``base`` once it signs with ``key_id`` (a node reads the keyring again
    within seconds of a rotation another process made)."""
    for _ in range(20):
        export = await _finished_export(session, base)
        if export["signature"]["key_id"] == key_id:
            return export
        await asyncio.sleep(0.5)
    raise AssertionError(f"{base} does not sign with {key_id}")


async def test_two_nodes_on_one_store_sign_with_one_key_before_and_after_a_rotation(valkey, tmp_path):
    nodes = Nodes(valkey, tmp_path, launch=LAUNCH_EVERY_GAME)
    try:
        async with aiohttp.ClientSession() as session:
            (_, a), (_, b) = await asyncio.gather(nodes.start(session, signing_key=""),
                                                  nodes.start(session, signing_key=""))
            listing = await _keys(session, a)
            assert listing == await _keys(session, b) and len(listing["keys"]) == 1
            old = [await _finished_export(session, a), await _finished_export(session, b)]
            assert {export["signature"]["key_id"] for export in old} == {listing["keys"][0]["id"]}

            rotated = _rotate(valkey)
            new_id = rotated["keys"][0]["id"]
            assert new_id != listing["keys"][0]["id"] and rotated["keys"][1]["status"] == "retired"
            new = [await _signed_by(session, a, new_id), await _signed_by(session, b, new_id)]
            assert await _keys(session, a) == await _keys(session, b) == rotated

            for index, export in enumerate(old + new):
                path = tmp_path / f"export-{index}.json"
                path.write_text(json.dumps(export))
                for base in (a, b):
                    done = await asyncio.to_thread(_verify, path, f"{base}/keys")
                    assert done.returncode == 0, (index, base, done.stdout + done.stderr)
    finally:
        nodes.stop_all()
