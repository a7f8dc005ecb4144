"""``GET /games/catalog/{game}/assets``: the tile designs clients draw, from the served engines' data."""

from __future__ import annotations

import games
from games.carcassonne.tiles import tile_set
from games.tileboard import PORT_NAMES
from service.edge.keys import ENGINES
from service.run.app import create_app
from tests.service.conftest import settings_for
from tests.service.test_served import dataset_file


async def _client(aiohttp_client, url, **overrides):
    return await aiohttp_client(create_app(settings_for(url, **overrides), engines=games.default_engines()))


async def test_carcassonne_assets_are_the_rules_tile_table(aiohttp_client, embedded_redis_url):
    client = await _client(aiohttp_client, embedded_redis_url)
    response = await client.get("/games/catalog/carcassonne/assets")
    assert response.status == 200
    body = await response.json()
    tiles = tile_set(True, "east").tiles
    assert body["ports"] == list(PORT_NAMES) and body["start_tile"] == "D"
    assert set(body["tiles"]) == set(tiles)
    for tile_id, tile in tiles.items():
        drawn = body["tiles"][tile_id]
        assert drawn["ports"] == list(tile.ports)
        assert [(s["kind"], s["attrs"], tuple(s["touches"])) for s in drawn["segments"]] == [
            (s.kind, dict(s.attrs), s.touches) for s in tile.segments
        ]
    assert body["tiles"]["IC-K"]["segments"][0]["attrs"] == {"cathedral": True}
    east_west = body["variants"]["junction_inn"]["east_west"]
    assert list(east_west) == ["IC-C"]
    roads = [s for s in east_west["IC-C"]["segments"] if s["kind"] == "road"]
    assert [s["attrs"].get("inn", False) for s in roads] == [True, False, True]


async def test_castle_assets_follow_the_served_dataset(aiohttp_client, embedded_redis_url, tmp_path):
    client = await _client(aiohttp_client, embedded_redis_url, castle_data=dataset_file(tmp_path))
    body = await (await client.get("/games/catalog/castle/assets")).json()
    dataset = client.app[ENGINES]["castle"].dataset
    assert body["dataset"] == "castle-ops" == dataset.name
    assert set(body["tiles"]) == {t.id for t in dataset.tiles + dataset.falcon_tiles}
    square_path = {"kind": "path", "token": "p", "attrs": {"end": "square"}, "touches": []}
    assert body["tiles"]["B10"]["segments"][1] == square_path
    base = body["start_spaces"]["base"]
    assert [(s["id"], s["x"], s["y"], s["gate"]) for s in base] == [
        (s.id, s.x, s.y, s.gate) for s in dataset.boards["base"].start_spaces
    ]
    assert base[0]["tile"]["ports"] == list(dataset.boards["base"].start_spaces[0].tile.ports)
    assert sum(s["gate"] for s in body["start_spaces"]["falcon"]) == 2


async def test_a_game_without_tiles_has_bare_assets_and_an_unknown_game_is_not_found(
    aiohttp_client, embedded_redis_url
):
    client = await _client(aiohttp_client, embedded_redis_url)
    assert await (await client.get("/games/catalog/castle_panic/assets")).json() == {"game": "castle_panic"}
    response = await client.get("/games/catalog/chess/assets")
    assert response.status == 404
    assert (await response.json())["error"]["code"] == "not_found"
