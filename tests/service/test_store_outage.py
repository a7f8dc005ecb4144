"""The store going away: ``store_unavailable`` everywhere, ``/readyz`` failing, and recovery by
itself once the store is back (same data folder, nothing lost)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest

from events.embedded import EmbeddedServer
from service.edge.keys import STORE
from service.run.app import create_app
from tests.service.conftest import (
    ENGINES,
    command,
    expect_reply,
    hello,
    receive,
    receive_until,
    settings_for,
    started_tiny,
)


@pytest.fixture
async def own_server(tmp_path):
    server = EmbeddedServer(tmp_path / "valkey", fsync="always")
    await server.start_async()
    yield server
    await asyncio.to_thread(server.stop)


async def test_an_unreachable_store_gives_store_unavailable_and_the_service_recovers(aiohttp_client, own_server):
    url = own_server.url
    client = await aiohttp_client(create_app(settings_for(url), engines=ENGINES))
    game_id, tokens = await started_tiny(client)
    player, _ = await hello(client, game_id, tokens[0])
    watcher, _ = await hello(client, game_id)

    await asyncio.to_thread(own_server.kill)
    ready = await client.get("/readyz")
    assert ready.status == 503
    assert (await ready.json())["error"]["code"] == "store_unavailable"
    created = await client.post("/games", json={"game": "tiny", "seats": 2})
    assert created.status == 503 and (await created.json())["error"]["code"] == "store_unavailable"
    await command(player, "during", {"type": "draw", "args": {}})
    error, _ = await expect_reply(player, "during")
    assert (error["type"], error["code"]) == ("error", "store_unavailable")
    assert (await client.get("/healthz")).status == 200

    restarted = EmbeddedServer(own_server.data_dir, fsync="always")
    await restarted.start_async()
    try:
        assert restarted.url == url
        for _ in range(50):
            if (await client.get("/readyz")).status == 200:
                break
            await asyncio.sleep(0.1)
        assert (await client.get("/readyz")).status == 200
        await command(player, "after", {"type": "draw", "args": {}})
        ack, _ = await expect_reply(player, "after")
        assert (ack["type"], ack["version"]) == ("ack", 7)
        update = await receive(watcher, timeout=10)
        assert (update["type"], update["version"]) == ("update", 7)
    finally:
        await asyncio.to_thread(restarted.stop)


async def test_a_hello_that_fails_after_subscribing_drops_the_updates_it_held_back(aiohttp_client, own_server):
    """The store dies while a hello reads what the client missed, after a live update for the
    socket was held back: the answer is the error alone, and the retry gets each version once.

    The failure is real (the server is killed under the read); only its moment is pinned, by
    wrapping this app's ``store.read`` (our code, not Redis) so that the live update is held
    before the read goes to the dead server: the real store cannot order the two by itself."""
    client = await aiohttp_client(create_app(settings_for(own_server.url), engines=ENGINES))
    game_id, tokens = await started_tiny(client)
    player, _ = await hello(client, game_id, tokens[0])
    other, _ = await hello(client, game_id, tokens[1])
    watcher, _ = await hello(client, game_id)  # keeps the game live on the node
    draw = {"type": "draw", "args": {}}
    await command(player, "c7", draw)
    assert (await expect_reply(player, "c7"))[0]["version"] == 7
    store = client.app[STORE]
    real_read = store.read

    async def read_after_a_held_update(*args, **kwargs):
        del store.read  # once
        await command(other, "c8", draw)  # version 8 reaches every socket, the held one too
        await receive_until(watcher, lambda f: f["version"] == 8)
        await asyncio.to_thread(own_server.kill)
        return await real_read(*args, **kwargs)

    store.read = read_after_a_held_update
    late, answer = await hello(client, game_id, since=6)
    assert (answer["type"], answer.get("code")) == ("error", "store_unavailable"), answer
    with pytest.raises(asyncio.TimeoutError):
        extra = await receive(late, timeout=0.5)
        pytest.fail(f"the failed hello sent {extra}")

    restarted = EmbeddedServer(own_server.data_dir, fsync="always")
    await restarted.start_async()
    try:
        for _ in range(50):
            if (await client.get("/readyz")).status == 200:
                break
            await asyncio.sleep(0.1)
        await late.send_json({"type": "hello", "since": 6})
        missed = await receive(late, timeout=10)
        assert (missed["type"], [e["version"] for e in missed["events"]]) == ("update", [7, 8])
        await command(player, "c9", draw)
        update = await receive(late, timeout=10)
        assert (update["version"], [e["version"] for e in update["events"]]) == (9, [9])
    finally:
        await asyncio.to_thread(restarted.stop)


@contextlib.contextmanager
def frozen(server: EmbeddedServer):
    """The server stopped (SIGSTOP: it keeps its sockets but answers nothing), always resumed."""
    assert server.pid is not None
    os.kill(server.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.pid, signal.SIGCONT)


async def timed(call):
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await call
    return result, loop.time() - started


async def test_a_hung_store_fails_readiness_commands_and_routes_within_their_budgets(aiohttp_client, own_server):
    settings = settings_for(own_server.url)
    assert (settings.store_timeout_ms, settings.ready_timeout_ms) == (2000, 1000)  # the documented defaults
    client = await aiohttp_client(create_app(settings, engines=ENGINES))
    game_id, tokens = await started_tiny(client)
    player, _ = await hello(client, game_id, tokens[0])
    margin = 1.5  # a loaded test machine; the failure this guards against took 30 s
    with frozen(own_server):
        ready, seconds = await timed(client.get("/readyz"))
        assert ready.status == 503 and (await ready.json())["error"]["code"] == "store_unavailable"
        assert seconds < 1.0 + margin, f"/readyz took {seconds:.1f} s"

        async def refused_command():
            await command(player, "hung", {"type": "draw", "args": {}})
            error, _ = await expect_reply(player, "hung")
            return error["code"]

        async def refused_request(method, path):
            response = await client.request(method, path, json={"game": "tiny", "seats": 2})
            return response.status, (await response.json())["error"]["code"]

        answers = await asyncio.gather(  # at once: each is timed on its own
            timed(refused_command()),
            timed(refused_request("GET", f"/games/{game_id}")),
            timed(refused_request("POST", "/games")),
            timed(refused_request("GET", "/games")),
        )
        assert [answer for answer, _ in answers] == ["store_unavailable"] + [(503, "store_unavailable")] * 3
        slowest = max(seconds for _, seconds in answers)
        assert slowest < 2.0 + margin, f"answers took {[round(seconds, 2) for _, seconds in answers]} s"

    for _ in range(50):
        if (await client.get("/readyz")).status == 200:
            break
        await asyncio.sleep(0.1)
    assert (await client.get("/readyz")).status == 200
    await command(player, "thawed", {"type": "draw", "args": {}})
    ack, _ = await expect_reply(player, "thawed")
    assert ack["type"] == "ack"
