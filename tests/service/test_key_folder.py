"""Key files never live in the data folder (issue 22): the seed key is made in the keys folder
(``DONJON_KEYS_DIR``, by default ``donjon-keys`` beside the data folder), a key file an older
version left in the data folder is moved there on start, and a copy of the data folder alone
opens no sealed seed and no signing key."""

from __future__ import annotations

import logging
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from events.embedded import EmbeddedServer
from events.store import EventStore
from service.edge.keys import STORE
from service.fairness.deployment_keys import DeploymentKeys, KeyringError
from service.fairness.seed_vault import SealedSeedError, opened_meta
from service.ops.settings import Settings, SettingsError
from service.play.game_service import now_ms
from service.run.app import create_app, node_vault, old_signing_key_of
from tests.service.conftest import ENGINES


def _regular_files(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file() and not path.is_symlink()]


def test_the_seed_key_is_made_in_the_keys_folder_beside_the_data_folder(tmp_path):
    settings = Settings(data_dir=tmp_path / "donjon-data")
    assert settings.key_folder == tmp_path / "donjon-keys"
    node_vault(settings)
    made = tmp_path / "donjon-keys" / "seed.key"
    assert made.exists() and stat.S_IMODE(made.stat().st_mode) == 0o600
    assert not (tmp_path / "donjon-data" / "seed.key").exists()
    chosen = Settings.from_env({"DONJON_KEYS_DIR": str(tmp_path / "vault"), "DONJON_DATA_DIR": str(tmp_path / "d")})
    assert chosen.key_folder == tmp_path / "vault"
    node_vault(chosen)
    assert (tmp_path / "vault" / "seed.key").exists()


def test_key_files_left_in_the_data_folder_are_moved_out_on_start(tmp_path, caplog):
    data = tmp_path / "donjon-data"
    data.mkdir()
    (data / "seed.key").write_text("5e" * 32 + "\n")
    (data / "signing.key").write_text("51" * 32 + "\n")
    settings = Settings(data_dir=data)
    with caplog.at_level(logging.INFO):
        vault = node_vault(settings)
        assert old_signing_key_of(settings) == bytes.fromhex("51" * 32)
    assert vault.open("g", vault.seal("g", b"s")) == b"s"
    assert sorted(path.name for path in (tmp_path / "donjon-keys").iterdir()) == ["seed.key", "signing.key"]
    assert (tmp_path / "donjon-keys" / "seed.key").read_text().strip() == "5e" * 32
    assert not (data / "seed.key").exists() and not (data / "signing.key").exists()
    assert caplog.text.count("keys.file_moved") == 2
    (data / "seed.key").write_text("00" * 32 + "\n")  # another key back in the data folder: which one is right?
    with pytest.raises(SettingsError, match="hold different keys"):
        node_vault(settings)


async def _a_game_on_the_embedded_server(aiohttp_client: Any, data: Path) -> str:
    """A game created by a node of its own embedded server in ``data``, with no key setting."""
    settings = Settings(data_dir=data, seed_key=None, signing_key=None, bot_sweep_ms=0)
    client = await aiohttp_client(create_app(settings, engines=ENGINES))
    created = await client.post("/games", json={"game": "tiny", "seats": 2})
    game_id = (await created.json())["id"]
    assert "seed_sealed" in (await client.app[STORE].get_meta(game_id))
    await client.close()
    return game_id


async def test_a_copy_of_the_data_folder_alone_opens_no_sealed_seed(aiohttp_client, tmp_path):
    site = tmp_path / "site" / "donjon-data"
    game_id = await _a_game_on_the_embedded_server(aiohttp_client, site)
    seed_key = (tmp_path / "site" / "donjon-keys" / "seed.key").read_text().strip()
    copy = tmp_path / "thief" / "donjon-data"
    shutil.copytree(site, copy, ignore=lambda folder, names: [n for n in names if n.endswith((".sock", ".lock"))])
    for path in _regular_files(copy):
        content = path.read_bytes()
        assert not path.name.endswith(".key"), path
        assert seed_key.encode() not in content and bytes.fromhex(seed_key) not in content, path
    thief = node_vault(Settings(data_dir=copy))  # finds no key: makes one of its own, beside the copy
    async with EmbeddedServer(copy) as server:
        store = await EventStore.connect(server.url)
        try:
            meta = await store.get_meta(game_id)
            assert meta is not None
            with pytest.raises(SealedSeedError):
                opened_meta(game_id, meta, thief)
            with pytest.raises(KeyringError, match="seed key"):
                await DeploymentKeys.open(store.server, thief, now_ms)
        finally:
            await store.close()
