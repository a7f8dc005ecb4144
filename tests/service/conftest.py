"""Fixtures for the service tests: apps on the shared embedded server, clients, game helpers.

- ``make_client(**settings)``: a pytest-aiohttp test client of a fresh app (a *node*) on the
  session's embedded Valkey, serving the tiny game; call it twice for two nodes. Its websockets
  are :class:`tests.service.contract.CheckedWebSocket`: every frame received is checked against
  ``asyncapi.json``; every HTTP answer it gets is checked against ``openapi.json``.
- ``client``: one such node.
- ``make_node(**settings)``: the same, parametrized ``embedded`` / ``cluster``: a multi-node
  test that takes it runs once with its nodes on the embedded Valkey and once on the session's
  3-master cluster (tests/conftest.py).
- helpers to create a tiny game, take both seats, and talk websocket with timeouts.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from events.embedded import EmbeddedServer
from service.fairness.seed_vault import SeedVault
from service.ops.settings import Secret, Settings
from service.run.app import create_app
from tests.service.contract import CheckedWebSocket, openapi_trace
from tests.tinygame import TINY

ENGINES = {"tiny": TINY}
TIMEOUT = 5.0


TEST_SEED_KEY = "5e" * 32
"""One node key for every test app, so nodes sharing a store open each other's sealed seeds
(and no test writes a key file into the working folder)."""


TEST_SIGNING_KEY = "51" * 32
"""One Ed25519 private key for every test app (no test writes a key file into the working folder)."""
TEST_VAULT = SeedVault(bytes.fromhex(TEST_SEED_KEY))
"""The test apps' vault, for a replay that reads a running game's sealed seed."""


@pytest.fixture(autouse=True)
def _node_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``donjon`` command a test runs (in process or as a child) has the tests' node keys, so
    none writes a key file into the working folder."""
    monkeypatch.setenv("DONJON_SEED_KEY", TEST_SEED_KEY)
    monkeypatch.setenv("DONJON_SIGNING_KEY", TEST_SIGNING_KEY)


def settings_for(url: str, **overrides: Any) -> Settings:
    overrides.setdefault("seed_key", Secret(TEST_SEED_KEY))
    overrides.setdefault("signing_key", Secret(TEST_SIGNING_KEY))
    # Every test shares the session's server and so its due-bots index: a node sweeping it would
    # move bot games other tests left owing on purpose. Tests that sweep run their own server.
    overrides.setdefault("bot_sweep_ms", 0)
    return Settings(redis_url=Secret(url), **{"read_block_ms": 500, **overrides})


async def kept_seed(app: Any, game_id: str) -> bytes:
    """The server seed the service keeps (sealed) in a game's meta, as the app opens it."""
    from service.edge.keys import SERVICE

    return (await app[SERVICE].cache.meta(game_id)).seed


@pytest.fixture
def make_client(aiohttp_client: Any, embedded_redis_url: str) -> Callable[..., Awaitable[Any]]:
    async def make(**overrides: Any) -> Any:
        engines = overrides.pop("engines", ENGINES)
        clock = overrides.pop("clock", None)
        app = create_app(settings_for(embedded_redis_url, **overrides), engines=engines, clock=clock)
        return await aiohttp_client(app, ws_response_class=CheckedWebSocket, trace_configs=[openapi_trace()])

    return make


@pytest.fixture(params=["embedded", "cluster"])
def make_node(request: pytest.FixtureRequest, aiohttp_client: Any) -> Callable[..., Awaitable[Any]]:
    url = request.getfixturevalue(f"{request.param}_redis_url")

    async def make(**overrides: Any) -> Any:
        engines = overrides.pop("engines", ENGINES)
        return await aiohttp_client(create_app(settings_for(url, **overrides), engines=engines))

    return make


@pytest.fixture
async def client(make_client: Callable[..., Awaitable[Any]]) -> Any:
    return await make_client()


async def create_tiny(client: Any, **options: Any) -> str:
    response = await client.post("/games", json={"game": "tiny", "options": options, "seats": 2})
    assert response.status == 201, await response.text()
    return (await response.json())["id"]


async def take_seat(client: Any, game_id: str, name: str) -> dict[str, Any]:
    response = await client.post(f"/games/{game_id}/seats", json={"name": name})
    assert response.status == 200, await response.text()
    return await response.json()


async def started_tiny(client: Any, **options: Any) -> tuple[str, list[str]]:
    """A tiny game with both seats taken: ``(game_id, [token0, token1])``."""
    game_id = await create_tiny(client, **options)
    tokens = []
    for name in ("ann", "bob"):
        tokens.append((await take_seat(client, game_id, name))["token"])
    return game_id, tokens


async def receive(
    ws: aiohttp.ClientWebSocketResponse, timeout: float = TIMEOUT, *, counts: bool = False
) -> dict[str, Any]:
    """The next frame; the ``spectators`` count frames, which come whenever a spectator socket comes
    or goes, are passed over unless ``counts`` (the tests of the count ask for them)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        frame = await _one_frame(ws, max(0.01, deadline - loop.time()))
        if counts or frame.get("type") != "spectators":
            return frame


async def _one_frame(ws: aiohttp.ClientWebSocketResponse, timeout: float) -> dict[str, Any]:
    message = await asyncio.wait_for(ws.receive(), timeout)
    if message.type == aiohttp.WSMsgType.TEXT:
        return dict(json.loads(message.data))
    if message.type == aiohttp.WSMsgType.BINARY:
        import msgpack

        return dict(msgpack.unpackb(message.data, raw=False))
    raise AssertionError(f"expected a frame, got {message!r}")


async def receive_until(
    ws: aiohttp.ClientWebSocketResponse, predicate: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Frames until one matches: ``(match, every frame received, match included)``."""
    seen = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        frame = await receive(ws, max(0.01, deadline - loop.time()))
        seen.append(frame)
        if predicate(frame):
            return frame, seen


async def hello(client: Any, game_id: str, token: str | None = None, since: int | None = None, **kw: Any):
    """Open a socket, say hello; ``(ws, first frame)``."""
    ws = await client.ws_connect(f"/games/{game_id}/ws", **kw)
    frame: dict[str, Any] = {"type": "hello"}
    if token is not None:
        frame["token"] = token
    if since is not None:
        frame["since"] = since
    await ws.send_json(frame)
    return ws, await receive(ws)


async def command(ws: aiohttp.ClientWebSocketResponse, command_id: str, cmd: dict[str, Any], **extra: Any) -> None:
    await ws.send_json({"type": "command", "id": command_id, "command": cmd, **extra})


async def expect_reply(ws: aiohttp.ClientWebSocketResponse, command_id: str) -> tuple[dict[str, Any], list]:
    """The ack or error for ``command_id`` (updates before it are returned too)."""
    return await receive_until(ws, lambda f: f["type"] in ("ack", "error") and f.get("id") == command_id)


@pytest.fixture
def valkey(tmp_path: Path) -> Iterator[str]:
    """A Valkey server of the test's own (fsync everysec), for tests that start ``donjon serve``
    processes on it and kill them; its url."""
    server = EmbeddedServer(tmp_path / "valkey", fsync="everysec").start()
    try:
        yield server.url
    finally:
        server.stop()
