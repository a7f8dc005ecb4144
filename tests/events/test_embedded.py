"""The embedded Valkey server: durability across restarts, attaching, failures and recovery.

Functional tests: each starts its own server(s) on a temporary folder.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from events.embedded import LOCK_FILE, EmbeddedServer
from events.envelope import NewEvent
from events.errors import DataDirInUse, StoreUnavailable
from events.store import AppendResult, EventStore

ROOT = Path(__file__).resolve().parents[2]
TS = 1_700_000_000_000
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and PR_SET_PDEATHSIG")

OWNER = """
import sys, time
from events.embedded import LOCK_FILE, EmbeddedServer
server = EmbeddedServer(sys.argv[1]).start()
print(server.pid, server.url, flush=True)
time.sleep(120)
"""


def ev(type_: str, **payload: object) -> NewEvent:
    return NewEvent(type_, dict(payload))


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def wait_dead(pid: int, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def wait_unlocked(data_dir: Path, seconds: float = 10.0) -> bool:
    """True once no process holds the embedded server's lock on ``data_dir``."""
    deadline = time.monotonic() + seconds
    with open(data_dir / LOCK_FILE, "a") as handle:
        while time.monotonic() < deadline:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                time.sleep(0.05)
                continue
            fcntl.flock(handle, fcntl.LOCK_UN)
            return True
    return False


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


def start_owner_process(data_dir: Path) -> tuple[subprocess.Popen[str], int, str]:
    """A separate process (its own session, like a ``donjon serve``) owning a server on ``data_dir``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir.parent / "owner.err", "w") as errors:
        child = subprocess.Popen(
            [sys.executable, "-c", OWNER, str(data_dir)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE, stderr=errors, text=True, start_new_session=True,
        )
    line = child.stdout.readline().split()
    if len(line) != 2:
        child.kill()
        child.wait()
        pytest.fail(f"the owner process did not start: {(data_dir.parent / 'owner.err').read_text()}")
    return child, int(line[0]), line[1]


async def test_restart_after_sigkill_keeps_every_acknowledged_event(tmp_path) -> None:
    server = EmbeddedServer(tmp_path / "data", fsync="always").start()
    store = await EventStore.connect(server.url)
    acked = []
    for batch in range(40):
        result = await store.append("g", [ev("e", b=batch, i=i) for i in range(3)], expected_version=batch * 3,
                                    command_id=f"c{batch}", actor=0, ts=TS)
        acked.append(result)
    await store.create_game("meta-only", {"game": "castle"})
    server.kill()  # a crash: no shutdown, no final fsync
    await store.close()

    again = EmbeddedServer(tmp_path / "data", fsync="always").start()
    try:
        store = await EventStore.connect(again.url)
        events = await store.read("g")
        assert [(e.payload["b"], e.payload["i"]) for e in events] == [(b, i) for b in range(40) for i in range(3)]
        assert acked[-1] == AppendResult(118, 120, False)
        await store.verify_chain("g")
        assert await store.get_meta("meta-only") == {"game": "castle"}
        # Command ids survived too: a retry of an acknowledged command is still a duplicate.
        retry = await store.append("g", [ev("e")], expected_version=0, command_id="c7", actor=0, ts=TS)
        assert retry == AppendResult(22, 24, True)
        await store.close()
    finally:
        again.stop()


@pytest.mark.parametrize("fsync", ["always", "everysec"])
async def test_server_runs_append_only_with_the_fsync_mode_asked(tmp_path, fsync) -> None:
    async with EmbeddedServer(tmp_path / "data", fsync=fsync) as server:
        store = await EventStore.connect(server.url)
        config = await store.redis.config_get("append*")
        assert (config["appendonly"], config["appendfsync"]) == ("yes", fsync)
        assert (await store.redis.config_get("save"))["save"] == ""
        await store.close()
    assert (tmp_path / "data" / "appendonlydir").is_dir()


async def test_aof_rewrites_are_rare_and_never_skip_an_fsync(tmp_path) -> None:
    async with EmbeddedServer(tmp_path / "data") as server:
        store = await EventStore.connect(server.url)
        config = {**await store.redis.config_get("*aof*"), **await store.redis.config_get("*on-rewrite")}
        assert int(config["auto-aof-rewrite-min-size"]) == 512 * 2**20
        assert config["no-appendfsync-on-rewrite"] == "no"  # acks stay after the fsync during a rewrite
        assert (config["aof-rewrite-incremental-fsync"], config["aof-use-rdb-preamble"]) == ("yes", "yes")
        await store.close()


def test_unknown_fsync_mode_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="fsync must be 'always' or 'everysec', got 'never'"):
        EmbeddedServer(tmp_path, fsync="never")  # type: ignore[arg-type]


async def test_unreachable_server_raises_store_unavailable_from_every_method() -> None:
    store = await EventStore.connect(closed_port_url())
    calls = {
        "ping": store.ping(),
        "version": store.version("g"),
        "read": store.read("g"),
        "get_meta": store.get_meta("g"),
        "create_game": store.create_game("g", {"game": "castle"}),
        "append": store.append("g", [ev("a")], expected_version=0, command_id="c", actor=0, ts=TS),
        "read_many": store.read_many({"g": 0}, block_ms=100),
        "verify_chain": store.verify_chain("g"),
        "list_games": store.list_games("open"),
        "command_result": store.command_result("g", "c"),
    }
    for _name, call in calls.items():
        with pytest.raises(StoreUnavailable):
            await call
    with pytest.raises(StoreUnavailable):
        await anext(store.subscribe("g"))
    await store.close()


async def test_store_is_unavailable_while_the_server_is_down_and_recovers_when_it_is_back(tmp_path) -> None:
    server = EmbeddedServer(tmp_path / "data").start()
    store = await EventStore.connect(server.url)
    try:
        await store.append("g", [ev("a")], expected_version=0, command_id="c1", actor=0, ts=TS)
        server.stop()
        with pytest.raises(StoreUnavailable):
            await store.ping()
        with pytest.raises(StoreUnavailable):
            await store.append("g", [ev("b")], expected_version=1, command_id="c2", actor=0, ts=TS)

        server.start()  # same folder, same socket: the pool reconnects by itself
        await store.ping()
        assert await store.append("g", [ev("b")], expected_version=1, command_id="c2", actor=0, ts=TS) == \
            AppendResult(2, 2, False)
        assert [e.type for e in await store.read("g")] == ["a", "b"]
    finally:
        await store.close()
        server.stop()


async def test_subscription_raises_when_the_server_goes_and_resumes_from_its_position(tmp_path) -> None:
    server = EmbeddedServer(tmp_path / "data").start()
    store = await EventStore.connect(server.url)
    try:
        await store.append("g", [ev("a"), ev("b")], expected_version=0, command_id=None, actor=0, ts=TS)
        seen = []
        with pytest.raises(StoreUnavailable):
            async for envelope in store.subscribe("g", block_ms=100):
                seen.append(envelope.version)
                if envelope.version == 2:
                    server.stop()
        server.start()
        await store.append("g", [ev("c")], expected_version=2, command_id=None, actor=0, ts=TS)
        async for envelope in store.subscribe("g", seen[-1] + 1):
            seen.append(envelope.version)
            break
        assert seen == [1, 2, 3]
    finally:
        await store.close()
        server.stop()


def test_attach_or_start_attaches_to_a_running_server_and_leaves_it_running(tmp_path) -> None:
    owner = EmbeddedServer(tmp_path / "data").start()
    try:
        guest = EmbeddedServer.attach_or_start(tmp_path / "data")
        assert (guest.url, guest.owned, guest.pid) == (owner.url, False, None)
        guest.stop()
        assert owner.running and not guest.running
    finally:
        owner.stop()


def test_attach_or_start_starts_a_server_when_none_owns_the_folder(tmp_path) -> None:
    server = EmbeddedServer.attach_or_start(tmp_path / "data")
    try:
        assert server.owned and server.pid is not None and server.running
    finally:
        server.stop()
    assert not server.running


def test_a_second_owner_on_the_same_folder_is_refused(tmp_path) -> None:
    with EmbeddedServer(tmp_path / "data"), pytest.raises(DataDirInUse):
        EmbeddedServer(tmp_path / "data").start()


def test_a_folder_too_long_for_a_unix_socket_is_served_on_localhost_tcp(tmp_path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    with EmbeddedServer(deep) as server:
        assert server.url.startswith("redis://127.0.0.1:")
        port = server.url.rsplit(":", 1)[1]
        assert EmbeddedServer.attach_or_start(deep).url == server.url
    with EmbeddedServer(deep) as again:  # the same port again when it is free, for cached urls
        assert again.url.rsplit(":", 1)[1] == port


@linux_only
async def test_attach_to_a_server_another_process_owns_and_it_dies_with_that_process_group(tmp_path) -> None:
    child, server_pid, url = start_owner_process(tmp_path / "data")
    try:
        guest = EmbeddedServer.attach_or_start(tmp_path / "data")
        assert (guest.url, guest.owned) == (url, False)
        store = await EventStore.connect(guest.url)
        await store.append("g", [ev("replayed")], expected_version=0, command_id=None, actor=None, ts=TS)
        await store.close()
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert await asyncio.to_thread(wait_dead, server_pid)
    # Its lock went with it (once every process of the group has exited, which can come a moment
    # after the server's own pid is gone): the folder can be owned again, and the event is there.
    assert await asyncio.to_thread(wait_unlocked, tmp_path / "data")
    with EmbeddedServer(tmp_path / "data") as server:
        store = await EventStore.connect(server.url)
        assert [e.type for e in await store.read("g")] == ["replayed"]
        await store.close()


@linux_only
def test_server_dies_when_its_parent_alone_is_killed(tmp_path) -> None:
    child, server_pid, _ = start_owner_process(tmp_path / "data")
    os.kill(child.pid, signal.SIGKILL)  # not the group: only PR_SET_PDEATHSIG can take the server down
    child.wait()
    assert wait_dead(server_pid)
