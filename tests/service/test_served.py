"""What a service serves and how long its store lives: The Castle from an operator's dataset
(``DONJON_CASTLE_DATA``), a refusal to start on an invalid one, and the embedded Valkey dying
with ``donjon serve`` and ``donjon replay``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import aiohttp
import pytest

import games
import games.castle
from service.edge.keys import ENGINES, SERVICE
from service.ops.settings import Settings, SettingsError
from service.run.app import create_app
from service.run.served import served_engines
from tests.service.conftest import settings_for
from tests.service.test_crash_recovery import LAUNCH, ROOT, env, free_port, wait_ready
from tests.tinygame import TINY

SHIPPED = json.loads(games.castle.shipped_dataset_text())
BAD_ISSUES = [
    "tiles[0] (B01): count: must be at least 1, got -1",
    "tiles[1] (B02): ports: must be a string of 12 port tokens, got 'xx'",
    "tiles: count: the counts add up to 54, the game has 60 tiles",
]


def dataset_file(folder: Path, broken: bool = False) -> Path:
    data = json.loads(json.dumps(SHIPPED))
    data["name"] = "castle-ops"
    if broken:
        data["tiles"][0]["count"] = -1
        data["tiles"][1]["ports"] = "xx"
    path = folder / ("broken.json" if broken else "castle-ops.json")
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_setting_is_the_variable_games_castle_names():
    assert games.castle.DATA_ENV == "DONJON_CASTLE_DATA"
    settings = Settings.from_env({"DONJON_CASTLE_DATA": "/srv/castle.json"})
    assert settings.castle_data == Path("/srv/castle.json")
    assert Settings.from_env({}).castle_data is None


def test_without_the_setting_the_shipped_castle_is_served():
    engines = served_engines(Settings())
    assert engines["castle"] is games.castle.ENGINE
    assert served_engines(Settings(), {"tiny": TINY}) == {"tiny": TINY}


def test_an_invalid_dataset_is_refused_with_every_problem(tmp_path):
    with pytest.raises(SettingsError) as refused:
        served_engines(Settings(castle_data=dataset_file(tmp_path, broken=True)))
    message = str(refused.value)
    assert message.startswith(f"DONJON_CASTLE_DATA={str(tmp_path / 'broken.json')!r} is not a usable dataset: ")
    assert "castle-ops has 3 problem(s):" in message
    assert all(issue in message for issue in BAD_ISSUES)
    with pytest.raises(SettingsError, match="cannot be read"):
        served_engines(Settings(castle_data=tmp_path / "missing.json"))


async def test_the_service_serves_castle_from_the_operator_dataset_with_its_bots(aiohttp_client, embedded_redis_url, tmp_path):
    settings = settings_for(embedded_redis_url, castle_data=dataset_file(tmp_path))
    client = await aiohttp_client(create_app(settings, engines=games.default_engines()))
    engine = client.app[ENGINES]["castle"]
    assert engine is not games.castle.ENGINE and engine.dataset.name == "castle-ops"
    catalog = (await (await client.get("/games/catalog")).json())["games"]
    entry = next(e for e in catalog if e["id"] == "castle")
    assert (entry["dataset"], entry["bots"]) == ("castle-ops", ["greedy", "random"])
    assert all(bot.engine is engine for bot in client.app[SERVICE].bots["castle"].values())
    response = await client.post("/games", json={"game": "castle", "seats": 2, "bots": {"1": "greedy"}})
    game_id = (await response.json())["id"]
    await client.post(f"/games/{game_id}/seats", json={"name": "ann"})
    events = (await (await client.get(f"/games/{game_id}/events")).json())["events"]
    started = next(e for e in events if e["type"] == "game_started")
    assert started["payload"]["dataset"] == "castle-ops"


def test_donjon_serve_refuses_to_start_on_an_invalid_dataset(tmp_path):
    environ = env()
    environ["DONJON_CASTLE_DATA"] = str(dataset_file(tmp_path, broken=True))
    done = subprocess.run(
        [sys.executable, "-m", "service", "serve", "--data-dir", str(tmp_path / "data"), "--port", str(free_port())],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("donjon: DONJON_CASTLE_DATA=")
    assert all(issue in done.stderr for issue in BAD_ISSUES)
    assert not (tmp_path / "data").exists()  # refused before the store was started


# --- the embedded server's lifetime --------------------------------------------------------------


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
@pytest.mark.timeout(90)
async def test_the_embedded_server_dies_when_donjon_serve_is_killed_alone(tmp_path):
    port = free_port()
    service = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "serve", "--data-dir", str(tmp_path / "data"), "--port", str(port)],
        cwd=ROOT,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        async with aiohttp.ClientSession() as session:
            await wait_ready(session, f"http://127.0.0.1:{port}")
        valkey = [pid for pid in _children(service.pid) if "valkey" in Path(f"/proc/{pid}/comm").read_text()]
        assert len(valkey) == 1
        os.kill(service.pid, signal.SIGKILL)  # the service alone, not its process group
        service.wait(10)
        deadline = time.monotonic() + 10
        while _alive(valkey[0]) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not _alive(valkey[0]), "the embedded valkey-server outlived donjon serve"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(service.pid, signal.SIGKILL)


def test_donjon_replay_starts_its_embedded_server_from_the_main_thread(tmp_path, monkeypatch, capsys):
    from events.embedded import EmbeddedServer
    from service.run.cli import main

    threads = []
    spawn = EmbeddedServer._spawn

    def recording_spawn(self, lock_fd):
        threads.append(threading.current_thread() is threading.main_thread())
        return spawn(self, lock_fd)

    monkeypatch.setattr(EmbeddedServer, "_spawn", recording_spawn)
    for key in [k for k in os.environ if k.startswith("DONJON_")]:
        monkeypatch.delenv(key)
    (tmp_path / "data").mkdir()
    assert main(["replay", "0000000000000000", "--data-dir", str(tmp_path / "data")], {"tiny": TINY}) == 3
    assert threads == [True]
    assert "no game '0000000000000000'" in capsys.readouterr().err
