"""The store going away: ``store_unavailable`` everywhere, ``/readyz`` failing, and recovery by
itself once the store is back (same data folder, nothing lost)."""

from __future__ import annotations

import asyncio

import pytest

from events.embedded import EmbeddedServer
from service.app import create_app
from tests.service.conftest import ENGINES, command, expect_reply, hello, receive, settings_for, started_tiny


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
