"""Browser pages: ``DONJON_CORS_ORIGINS`` on every HTTP route and preflight, and the websocket's
``Origin`` checked against the same list; requests without ``Origin`` are served as before."""

from __future__ import annotations

import aiohttp
import pytest

from service.ops.settings import Settings, SettingsError
from tests.service.conftest import create_tiny, hello, started_tiny

APP = "https://app.example"
EVIL = "https://evil.example"


def preflight(method: str, origin: str) -> dict[str, str]:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": "authorization, content-type",
    }


async def test_a_preflight_from_an_allowed_origin_succeeds_and_names_methods_and_headers(make_client):
    client = await make_client(cors_origins=(APP,))
    game_id = await create_tiny(client)
    for path, method, methods in [
        ("/games", "POST", "GET, POST"),
        (f"/games/{game_id}/seats", "POST", "POST"),
        (f"/games/{game_id}", "GET", "GET"),
    ]:
        response = await client.options(path, headers=preflight(method, APP))
        assert response.status == 204, await response.text()
        assert response.headers["Access-Control-Allow-Origin"] == APP
        assert response.headers["Access-Control-Allow-Methods"] == methods
        assert "Authorization" in response.headers["Access-Control-Allow-Headers"]
        assert "Origin" in response.headers.getall("Vary")


async def test_an_allowed_page_reads_answers_and_errors_and_its_token_works(make_client):
    client = await make_client(cors_origins=(APP,))
    created = await client.post("/games", json={"game": "tiny", "seats": 2}, headers={"Origin": APP})
    assert created.status == 201 and created.headers["Access-Control-Allow-Origin"] == APP
    game_id = (await created.json())["id"]
    seat = await (await client.post(f"/games/{game_id}/seats", json={"name": "ann"}, headers={"Origin": APP})).json()
    mine = await client.get(f"/games/{game_id}", headers={"Origin": APP, "Authorization": f"Bearer {seat['token']}"})
    assert (mine.status, (await mine.json())["seat"]) == (200, 0)
    missing = await client.get("/games/0000000000000000", headers={"Origin": APP})
    assert missing.status == 404 and missing.headers["Access-Control-Allow-Origin"] == APP
    ws, first = await hello(client, game_id, seat["token"], headers={"Origin": APP})
    assert first["type"] == "snapshot"
    await ws.close()


async def test_another_origin_is_refused_on_routes_preflights_and_the_websocket(make_client):
    client = await make_client(cors_origins=(APP,))
    game_id, tokens = await started_tiny(client)
    before = await (await client.get(f"/games/{game_id}")).json()
    attempts = [
        client.options("/games", headers=preflight("POST", EVIL)),
        client.post("/games", json={"game": "tiny", "seats": 2}, headers={"Origin": EVIL}),
        client.get(f"/games/{game_id}", headers={"Origin": EVIL, "Authorization": f"Bearer {tokens[0]}"}),
        client.get("/games/catalog", headers={"Origin": "https://app.example.evil.example"}),
    ]
    for attempt in attempts:
        response = await attempt
        assert response.status == 403, await response.text()
        assert (await response.json())["error"]["code"] == "origin_not_allowed"
        assert "Access-Control-Allow-Origin" not in response.headers
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await client.ws_connect(f"/games/{game_id}/ws", headers={"Origin": EVIL})
    assert refused.value.status == 403
    assert await (await client.get(f"/games/{game_id}")).json() == before


async def test_by_default_only_the_same_origin_and_non_browsers_are_served(client):
    game_id, tokens = await started_tiny(client)
    own = f"http://{client.host}:{client.port}"
    assert (await client.get("/games/catalog", headers={"Origin": own})).status == 200
    assert (await client.get("/games/catalog")).status == 200  # no Origin: curl, bots, apps
    assert (await client.options("/games", headers=preflight("POST", APP))).status == 403
    assert (await client.get("/games/catalog", headers={"Origin": APP})).status == 403
    _ws, first = await hello(client, game_id, tokens[0], headers={"Origin": own})
    assert first["seat"] == 0
    with pytest.raises(aiohttp.WSServerHandshakeError):
        await client.ws_connect(f"/games/{game_id}/ws", headers={"Origin": APP})


async def test_a_star_allows_any_origin(make_client):
    client = await make_client(cors_origins=("*",))
    response = await client.options("/games", headers=preflight("POST", EVIL))
    assert (response.status, response.headers["Access-Control-Allow-Origin"]) == (204, "*")
    game_id, tokens = await started_tiny(client)
    _ws, first = await hello(client, game_id, tokens[0], headers={"Origin": EVIL})
    assert first["type"] == "snapshot"


def test_the_setting_is_comma_separated_origins():
    settings = Settings.from_env({"DONJON_CORS_ORIGINS": " https://a.example, http://localhost:5173/ ,"})
    assert settings.cors_origins == ("https://a.example", "http://localhost:5173")
    assert Settings.from_env({}).cors_origins == ()
    assert Settings.from_env({"DONJON_CORS_ORIGINS": "*"}).cors_origins == ("*",)
    for bad in ("a.example", "https://a.example/app", "ftp://a.example"):
        with pytest.raises(SettingsError, match="DONJON_CORS_ORIGINS"):
            Settings.from_env({"DONJON_CORS_ORIGINS": bad})
