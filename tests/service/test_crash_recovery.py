"""``donjon serve`` killed with SIGKILL (its whole process group, the embedded Valkey with it)
in the middle of a stream of commands, restarted on the same data folder: every acknowledged
command's events are there, once; ``donjon replay`` checks the games while the service runs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path

import aiohttp
import pytest

from bench.processes import wait_ready
from events.embedded import EmbeddedServer
from events.store import EventStore
from service.fairness.draw_schemes import LegacyRandom
from tests.service.conftest import TEST_SEED_KEY, TEST_SIGNING_KEY
from tests.service.contract import CheckedWebSocket, openapi_trace
from tests.service.players import Player

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = "import sys; from service.run.cli import main; from tests.tinygame import TINY; sys.exit(main(sys.argv[1:], engines={'tiny': TINY}))"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def env() -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DONJON_")}
    environ["DONJON_LOG_FORMAT"] = "json"
    environ["DONJON_WORKERS"] = "1"  # one node per process, as the tests count on (--workers has its own tests)
    environ["DONJON_WS_RATE"] = "1000"
    environ["DONJON_WS_BURST"] = "1000"
    # The tests' node keys: a node shares the store with the test apps, and writes no key file.
    environ["DONJON_SEED_KEY"], environ["DONJON_SIGNING_KEY"] = TEST_SEED_KEY, TEST_SIGNING_KEY
    return environ


def start_service(data_dir: Path, port: int, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "serve", "--data-dir", str(data_dir), "--port", str(port)],
        cwd=ROOT,
        env=env(),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def group_gone(pgid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


async def new_started_game(session, base):
    async with session.post(f"{base}/games", json={"game": "tiny", "seats": 2, "options": {"target": 20}}) as r:
        game_id = (await r.json())["id"]
    tokens = []
    for name in ("ann", "bob"):
        async with session.post(f"{base}/games/{game_id}/seats", json={"name": name}) as r:
            tokens.append((await r.json())["token"])
    return game_id, tokens


async def connect_player(session, base, game_id, token, seat, name):
    ws = await session.ws_connect(f"{base}/games/{game_id}/ws")
    await ws.send_json({"type": "hello", "token": token})
    first = await ws.receive_json(timeout=5)
    return Player(ws, first, LegacyRandom(zlib.crc32(name.encode())), name)


async def play_until_killed(player: Player) -> None:
    # The socket dies with the service.
    with contextlib.suppress(TimeoutError, aiohttp.ClientError, AssertionError, ConnectionError, TypeError):
        await player.play(timeout=10)


@pytest.mark.timeout(120)
async def test_sigkill_mid_stream_loses_no_acknowledged_command_and_repeats_none(tmp_path):
    data_dir, log = tmp_path / "data", tmp_path / "serve.log"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    service = start_service(data_dir, port, log)
    try:
        async with aiohttp.ClientSession(ws_response_class=CheckedWebSocket, trace_configs=[openapi_trace()]) as session:
            await wait_ready(session, base)
            games = [await new_started_game(session, base) for _ in range(4)]
            players = [
                await connect_player(session, base, game_id, token, seat, f"g{g}s{seat}")
                for g, (game_id, tokens) in enumerate(games)
                for seat, token in enumerate(tokens)
            ]
            tasks = [asyncio.create_task(play_until_killed(player)) for player in players]
            deadline = time.monotonic() + 10
            while sum(len(p.acked) for p in players) < 12 and time.monotonic() < deadline:
                await asyncio.sleep(0.005)
            os.killpg(service.pid, signal.SIGKILL)  # the service and its embedded Valkey, mid-stream
            service.wait()
            assert group_gone(service.pid), "the embedded Valkey outlived the SIGKILL of its group"
            await asyncio.wait(tasks, timeout=15)
        acked = {(p.name, cid): version for p in players for cid, version in p.acked.items()}
        assert len(acked) >= 12
    finally:
        if service.poll() is None:
            os.killpg(service.pid, signal.SIGKILL)

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    restarted = start_service(data_dir, port, log)
    try:
        async with aiohttp.ClientSession(ws_response_class=CheckedWebSocket, trace_configs=[openapi_trace()]) as session:
            await wait_ready(session, base)
            server = EmbeddedServer.attach_or_start(data_dir)
            assert not server.owned  # the restarted service owns it; we only attach
            store = await EventStore.connect(server.url)
            try:
                by_game = {game_id: await store.read(game_id) for game_id, _ in games}
            finally:
                await store.close()
            for (game_index, (game_id, _tokens)) in enumerate(games):
                envelopes = by_game[game_id]
                assert [e.version for e in envelopes] == list(range(1, len(envelopes) + 1))
                firsts = [e for e in envelopes if e.command is not None and e.command_id]
                ids = [e.command_id for e in firsts]
                assert len(ids) == len(set(ids)), "a command was applied twice"
                last_of = {}
                for e in envelopes:
                    if e.command_id:
                        last_of[e.command_id] = e.version
                for seat in (0, 1):
                    name = f"g{game_index}s{seat}"
                    for (player, cid), version in acked.items():
                        if player == name:
                            assert last_of.get(f"{seat}:{cid}") == version, (cid, version)
            # replay reads the store the running service owns, and checks each game
            for game_id, _ in games:
                result = subprocess.run(
                    [sys.executable, "-c", LAUNCH, "replay", game_id, "--data-dir", str(data_dir)],
                    cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60,
                )
                assert result.returncode == 0, result.stdout + result.stderr
                assert "OK:" in result.stdout
            # and the game goes on after the restart
            game_id, tokens = games[0]
            player = await connect_player(session, base, game_id, tokens[0], 0, "after")
            assert player.version == len(by_game[game_id])
        restarted.send_signal(signal.SIGTERM)
        assert restarted.wait(timeout=20) == 0
        assert group_gone(restarted.pid), "a clean stop must stop the embedded Valkey too"
    finally:
        if restarted.poll() is None:
            os.killpg(restarted.pid, signal.SIGKILL)
