"""HTTP API v1 against a real app on the embedded Valkey: routes, bodies, error codes."""

from __future__ import annotations

import hashlib

import pytest

from service.edge.keys import STORE
from service.play.features import catalog_features
from tests.service.conftest import create_tiny, started_tiny, take_seat


async def test_healthz_and_readyz_answer_ok_when_the_store_is_up(client):
    assert (await (await client.get("/healthz")).json()) == {"status": "ok"}
    response = await client.get("/readyz")
    assert response.status == 200
    assert await response.json() == {"status": "ready"}


async def test_catalog_lists_the_served_games_with_seats_and_options(client):
    body = await (await client.get("/games/catalog")).json()
    assert body == {
        "games": [
            {
                "id": "tiny",
                "title": "Tiny card race (tests only)",
                "min_seats": 2,
                "max_seats": 2,
                "options": {"target": {"type": "int", "default": 6, "description": "Score that wins at once (1-20)."}},
                "bots": ["first", "random"],
                "features": catalog_features(cooperative=False),
            }
        ]
    }


async def test_create_game_returns_201_and_an_open_game_with_a_seed_commitment(client):
    game_id = await create_tiny(client, target=5)
    body = await (await client.get(f"/games/{game_id}")).json()
    assert body == {
        "id": game_id,
        "game": "tiny",
        "status": "open",
        "version": 1,
        "seat": None,
        "seats": [{"seat": 0, "name": None}, {"seat": 1, "name": None}],
        "view": {"legal": []},
        "spectators": 0,
    }
    events = (await (await client.get(f"/games/{game_id}/events")).json())["events"]
    assert [e["type"] for e in events] == ["game.created"]
    created = events[0]["payload"]
    assert created["options"] == {"target": 5}
    assert len(created["seed_commitment"]) == 64
    assert "seed" not in created


async def test_seats_are_given_in_order_and_the_last_one_starts_the_game(client):
    game_id = await create_tiny(client)
    first = await take_seat(client, game_id, "ann")
    assert (first["seat"], first["status"]) == (0, "open")
    second = await take_seat(client, game_id, "bob")
    assert (second["seat"], second["status"]) == (1, "active")
    assert len(first["token"]) >= 43 and first["token"] != second["token"]
    body = await (await client.get(f"/games/{game_id}")).json()
    assert body["status"] == "active"
    assert body["version"] == 6  # created, 2 seats, started, 2 dealt
    assert body["seats"] == [
        {"seat": 0, "name": "ann", "seed_contribution": first["seed_contribution"]},
        {"seat": 1, "name": "bob", "seed_contribution": second["seed_contribution"]},
    ]


async def test_a_full_game_refuses_another_seat_with_game_full(client):
    game_id, _ = await started_tiny(client)
    response = await client.post(f"/games/{game_id}/seats", json={"name": "cid"})
    assert response.status == 409
    assert (await response.json())["error"]["code"] == "game_full"


async def test_tokens_are_stored_only_as_hashes(client):
    game_id = await create_tiny(client)
    token = (await take_seat(client, game_id, "ann"))["token"]
    meta = await client.app[STORE].get_meta(game_id)
    flat = repr(meta)
    assert token not in flat
    assert f"token:{hashlib.sha256(token.encode()).hexdigest()}" in meta
    events = await client.app[STORE].read(game_id)
    assert all(token not in repr(e) for e in events)


async def test_the_seat_view_needs_its_token_and_shows_its_hand_only(client):
    game_id, tokens = await started_tiny(client)
    seat0 = await (await client.get(f"/games/{game_id}", headers={"Authorization": f"Bearer {tokens[0]}"})).json()
    spectator = await (await client.get(f"/games/{game_id}")).json()
    assert seat0["seat"] == 0
    assert len(seat0["view"]["hand"]) == 1
    assert seat0["view"]["legal"][0] == {"type": "draw", "args": {}}
    assert spectator["seat"] is None
    assert "hand" not in spectator["view"]
    assert spectator["view"]["legal"] == []


async def test_a_wrong_or_foreign_token_is_unauthorized(client):
    game_id, _ = await started_tiny(client)
    _other_id, other_tokens = await started_tiny(client)
    for header in ("Bearer nope", f"Bearer {other_tokens[0]}", "Basic abc", "Bearer "):
        response = await client.get(f"/games/{game_id}", headers={"Authorization": header})
        assert response.status == 401, header
        assert (await response.json())["error"]["code"] == "unauthorized"


async def test_events_are_redacted_for_spectators_and_other_seats(client):
    game_id, tokens = await started_tiny(client)
    spectator = (await (await client.get(f"/games/{game_id}/events?from=4")).json())["events"]
    seat0 = (
        await (await client.get(f"/games/{game_id}/events?from=4", headers={"Authorization": f"Bearer {tokens[0]}"})).json()
    )["events"]
    assert [(e["version"], e["type"], e["payload"]) for e in spectator] == [
        (4, "started", {"target": 6}),
        (5, "dealt", {"seat": 0}),
        (6, "dealt", {"seat": 1}),
    ]
    assert set(seat0[1]["payload"]) == {"seat", "card"}
    assert seat0[2]["payload"] == {"seat": 1}


async def test_state_at_a_version_is_the_spectator_view_then(client):
    game_id, _ = await started_tiny(client)
    at2 = await (await client.get(f"/games/{game_id}/state?at=2")).json()
    assert (at2["version"], at2["status"], at2["seats"][1]["name"]) == (2, "open", None)
    at6 = await (await client.get(f"/games/{game_id}/state?at=6")).json()
    assert at6["view"]["hand_sizes"] == [1, 1] and at6["view"]["pile_size"] == 6
    beyond = await client.get(f"/games/{game_id}/state?at=99")
    assert beyond.status == 400 and (await beyond.json())["error"]["code"] == "bad_request"


async def test_lobby_lists_games_by_status(client):
    open_id = await create_tiny(client)
    active_id, _ = await started_tiny(client)
    opened = (await (await client.get("/games?status=open&limit=200")).json())["games"]
    active = (await (await client.get("/games?status=active&limit=200")).json())["games"]
    assert open_id in [g["id"] for g in opened] and open_id not in [g["id"] for g in active]
    assert active_id in [g["id"] for g in active] and active_id not in [g["id"] for g in opened]
    entry = next(g for g in active if g["id"] == active_id)
    assert (entry["game"], entry["status"], entry["seats"], entry["taken"], entry["names"]) == (
        "tiny", "active", 2, 2, ["ann", "bob"]
    )
    bad = await client.get("/games?status=paused")
    assert bad.status == 400 and (await bad.json())["error"]["code"] == "bad_request"


async def test_create_game_refusals_have_stable_codes(client):
    cases = [
        ({"game": "chess", "seats": 2}, 400, "unknown_game"),
        ({"game": "tiny", "seats": 3}, 400, "bad_options"),
        ({"game": "tiny", "seats": 2, "options": {"target": 99}}, 400, "bad_options"),
        ({"game": "tiny", "seats": 2, "options": {"speed": 1}}, 400, "bad_options"),
        ({"game": "tiny", "seats": 2, "options": [1]}, 400, "bad_options"),
    ]
    for body, status, code in cases:
        response = await client.post("/games", json=body)
        assert response.status == status, body
        assert (await response.json())["error"]["code"] == code, body
    response = await client.post("/games", data=b"{not json", headers={"Content-Type": "application/json"})
    assert response.status == 400 and (await response.json())["error"]["code"] == "bad_json"
    response = await client.post("/games", json=[1, 2])
    assert (await response.json())["error"]["code"] == "bad_request"


async def test_unknown_games_and_routes_are_not_found(client):
    for path in ("/games/0000000000000000", "/games/0000000000000000/events", "/games/{bad}", "/nope"):
        response = await client.get(path)
        assert response.status == 404, path
        assert (await response.json())["error"]["code"] == "not_found", path
    response = await client.post("/games/0000000000000000/seats", json={"name": "ann"})
    assert response.status == 404


async def test_a_seat_name_must_be_a_short_string(client):
    game_id = await create_tiny(client)
    # "\r" + 40 characters: 41 as sent, which the contract's maxLength refuses even though 40 are kept
    for name in (None, "", "   ", "x" * 41, "\r" + "x" * 40, 7):
        response = await client.post(f"/games/{game_id}/seats", json={"name": name})
        assert response.status == 400, name
        assert (await response.json())["error"]["code"] == "bad_request"


async def test_an_oversized_body_is_refused_with_frame_too_large(make_client):
    client = await make_client(http_max_body=1024)
    response = await client.post("/games", json={"game": "tiny", "options": {"x": "y" * 4096}})
    assert response.status == 413
    assert (await response.json())["error"]["code"] == "frame_too_large"


async def test_metrics_are_prometheus_text(make_client):
    client = await make_client(node_id="node-7")
    before = await (await client.get("/metrics")).text()
    assert 'donjon_games_created_total{game="tiny",node="node-7"} 0.0' in before.splitlines()
    assert 'donjon_http_request_seconds_count{method="POST",node="node-7",route="/games"} 0.0' in before.splitlines()
    await create_tiny(client)
    response = await client.get("/metrics")
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    lines = (await response.text()).splitlines()
    assert "# TYPE donjon_games_created_total counter" in lines
    assert 'donjon_games_created_total{game="tiny",node="node-7"} 1.0' in lines
    assert 'donjon_http_requests_total{method="POST",node="node-7",route="/games",status="201"} 1.0' in lines
    assert 'donjon_http_request_seconds_count{method="POST",node="node-7",route="/games"} 1.0' in lines
    assert any(line.startswith("donjon_build_info{") and 'node="node-7"' in line for line in lines)
    assert not any("/games/{id}/ws" in line for line in lines if line.startswith("donjon_http_request_seconds"))


async def test_a_lost_lobby_write_is_repaired_when_a_node_next_loads_the_game(client, make_client):
    from events.store import lobby_keys, meta_key

    game_id, _ = await started_tiny(client)
    redis = client.app[STORE].redis
    await redis.hdel(meta_key(game_id), "lobby")  # as if the node died between append and lobby write
    for key in lobby_keys("active"):
        await redis.zrem(key, game_id)
    listed = (await (await client.get("/games?status=active&limit=200")).json())["games"]
    assert game_id not in [g["id"] for g in listed]
    other_node = await make_client()
    assert (await other_node.get(f"/games/{game_id}")).status == 200
    listed = (await (await client.get("/games?status=active&limit=200")).json())["games"]
    assert game_id in [g["id"] for g in listed]


async def test_event_pages_report_the_stream_version_and_end_with_next_null(client):
    game_id, _ = await started_tiny(client)  # version 6
    pages = {
        query: await (await client.get(f"/games/{game_id}/events?{query}")).json()
        for query in ("from=9999", "from=7", "from=1&limit=6", "from=4&limit=3", "from=1&limit=5")
    }
    for query in ("from=9999", "from=7"):
        assert (pages[query]["version"], pages[query]["events"], pages[query]["next"]) == (6, [], None), query
    assert pages["from=1&limit=6"]["next"] is None  # the page ends exactly on the last event
    assert pages["from=4&limit=3"]["next"] is None
    assert (pages["from=1&limit=5"]["next"], pages["from=1&limit=5"]["version"]) == (6, 6)


async def test_events_from_0_mean_from_the_start(client):
    game_id, _ = await started_tiny(client)
    from_zero = await (await client.get(f"/games/{game_id}/events?from=0")).json()
    from_one = await (await client.get(f"/games/{game_id}/events?from=1")).json()
    assert from_zero == from_one and from_zero["from"] == 1
    assert from_zero["events"][0]["version"] == 1
    refused = await client.get(f"/games/{game_id}/events?from=-1")
    assert (refused.status, (await refused.json())["error"]["code"]) == (400, "bad_request")


@pytest.mark.parametrize(
    "path, body, unknown",
    [
        ("/games", {"game": "tiny", "seats": 2, "optionz": {"target": 3}}, ["optionz"]),
        ("/games", {"game": "tiny", "Seats": 2, "bots_onyl": True}, ["Seats", "bots_onyl"]),
        ("/games/{id}/seats", {"name": "ann", "seat": 1}, ["seat"]),
    ],
)
async def test_unknown_body_fields_are_refused_naming_them_and_change_nothing(client, path, body, unknown):
    game_id = await create_tiny(client)
    before = await (await client.get("/games?limit=200")).json()
    response = await client.post(path.format(id=game_id), json=body)
    error = (await response.json())["error"]
    assert (response.status, error["code"]) == (400, "bad_request")
    assert repr(unknown) in error["message"], error
    assert await (await client.get("/games?limit=200")).json() == before
    assert (await (await client.get(f"/games/{game_id}")).json())["version"] == 1


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [33, 1_000, 10_000, 30_000])
@pytest.mark.parametrize("path", ["/games", "/games/{id}/seats"])
async def test_deeply_nested_bodies_are_bad_json_not_a_crash(client, path, depth):
    game_id = await create_tiny(client)
    for body in (nested(depth), '{"game": "tiny", "options": ' + nested(depth) + "}"):
        response = await client.post(path.format(id=game_id), data=body)
        error = (await response.json())["error"]
        assert (response.status, error["code"]) == (400, "bad_json"), (depth, error)
    assert (await (await client.get(f"/games/{game_id}")).json())["version"] == 1


async def test_a_plain_get_of_the_websocket_route_is_a_json_error(client):
    game_id = await create_tiny(client)
    response = await client.get(f"/games/{game_id}/ws")
    assert response.content_type == "application/json"
    error = (await response.json())["error"]
    assert (response.status, error["code"]) == (400, "bad_request") and "Upgrade" in error["message"]


async def test_a_header_too_long_to_read_is_a_json_error_logged_below_error(client):
    response = await client.get("/healthz", headers={"X-Padding": "x" * 9000})
    assert response.content_type == "application/json"
    error = (await response.json())["error"]
    assert (response.status, error["code"]) == (400, "bad_request") and "8190" in error["message"]
    assert (await client.get("/healthz")).status == 200


async def test_a_request_target_or_header_name_too_long_to_read_is_a_json_error_too(client):
    for response in (
        await client.get("/healthz?pad=" + "x" * 9000),
        await client.get("/healthz", headers={"X-" + "p" * 9000: "1"}),
    ):
        assert response.content_type == "application/json"
        error = (await response.json())["error"]
        assert (response.status, error["code"]) == (400, "bad_request") and "8190" in error["message"]


async def test_a_broken_websocket_handshake_is_a_json_error(client):
    game_id = await create_tiny(client)
    headers = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}  # no key
    response = await client.get(f"/games/{game_id}/ws", headers=headers)
    error = (await response.json())["error"]
    assert (response.status, error["code"]) == (400, "bad_request"), error
