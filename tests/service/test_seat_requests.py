"""``POST /games/{id}/seats`` with a ``request_id``: a retried seat request gets the same seat and
token, on any node, while the store still holds only hashes (two apps on the embedded Valkey)."""

from __future__ import annotations

import asyncio
import hashlib
import uuid

import pytest

from service.edge.keys import SERVICE, STORE
from tests.service.conftest import create_tiny


async def seat(client, game_id, name, request_id=None):
    body = {"name": name} if request_id is None else {"name": name, "request_id": request_id}
    response = await client.post(f"/games/{game_id}/seats", json=body)
    return response.status, await response.json()


async def test_a_retried_seat_request_returns_the_same_seat_and_token_on_another_node(make_client):
    node_a, node_b = await make_client(), await make_client()
    game_id = await create_tiny(node_a)
    request_id = str(uuid.uuid4())
    status, first = await seat(node_a, game_id, "ann", request_id)
    assert status == 200
    status, again = await seat(node_b, game_id, "ann", request_id)  # the first reply "was lost"
    assert status == 200
    assert (again["seat"], again["token"], again["version"]) == (first["seat"], first["token"], first["version"])
    status, other = await seat(node_b, game_id, "bob", str(uuid.uuid4()))
    assert status == 200 and other["seat"] != first["seat"] and other["token"] != first["token"]
    assert other["status"] == "active"
    # a retry once the game has started still answers with the request's own seat
    status, late = await seat(node_a, game_id, "ann", request_id)
    assert status == 200 and (late["seat"], late["token"]) == (first["seat"], first["token"])
    # the token works as the seat's credential on both nodes
    for node in (node_a, node_b):
        body = await (await node.get(f"/games/{game_id}", headers={"Authorization": f"Bearer {first['token']}"})).json()
        assert body["seat"] == first["seat"]
    envelopes = await node_a.app[STORE].read(game_id)
    assert [e.type for e in envelopes].count("game.seat_taken") == 2


async def test_the_store_and_the_log_hold_neither_the_token_nor_the_request_id(client):
    game_id = await create_tiny(client)
    request_id = "r-" + uuid.uuid4().hex
    _, body = await seat(client, game_id, "ann", request_id)
    meta = await client.app[STORE].get_meta(game_id)
    events = await client.app[STORE].read(game_id)
    for secret in (body["token"], request_id):
        assert secret not in repr(meta)
        assert all(secret not in repr(e) for e in events)
    assert f"token:{hashlib.sha256(body['token'].encode()).hexdigest()}" in meta
    seat_event = next(e for e in events if e.type == "game.seat_taken")
    assert seat_event.command_id == "seat:" + hashlib.sha256(request_id.encode()).hexdigest()


async def test_concurrent_tries_of_one_request_take_one_seat(make_client):
    node_a, node_b = await make_client(), await make_client()
    game_id = await create_tiny(node_a)
    request_id = uuid.uuid4().hex
    replies = await asyncio.gather(*(seat(node, game_id, "ann", request_id) for node in (node_a, node_b) * 3))
    assert {status for status, _ in replies} == {200}
    assert len({(body["seat"], body["token"]) for _, body in replies}) == 1
    envelopes = await node_a.app[STORE].read(game_id)
    assert [e.type for e in envelopes].count("game.seat_taken") == 1
    projection = await node_a.app[SERVICE].load(game_id)
    assert projection.free_seats == [1]


async def test_a_request_id_reused_with_another_name_is_refused_and_changes_nothing(client):
    game_id = await create_tiny(client)
    request_id = uuid.uuid4().hex
    await seat(client, game_id, "ann", request_id)
    version = len(await client.app[STORE].read(game_id))
    status, body = await seat(client, game_id, "bob", request_id)
    assert status == 400 and body["error"]["code"] == "bad_request" and "another name" in body["error"]["message"]
    assert len(await client.app[STORE].read(game_id)) == version


@pytest.mark.parametrize("request_id", ["short", "x" * 129, "has space in it!!", 12345678901234567, ["a" * 20]])
async def test_a_malformed_request_id_is_refused_with_bad_request(client, request_id):
    game_id = await create_tiny(client)
    version = len(await client.app[STORE].read(game_id))
    status, body = await seat(client, game_id, "ann", request_id)
    assert status == 400 and body["error"]["code"] == "bad_request" and "request_id" in body["error"]["message"]
    assert len(await client.app[STORE].read(game_id)) == version


async def test_without_a_request_id_every_request_takes_a_seat_with_a_random_token(client):
    game_id = await create_tiny(client)
    (_, a), (_, b) = await seat(client, game_id, "ann"), await seat(client, game_id, "ann")
    assert (a["seat"], b["seat"]) == (0, 1) and a["token"] != b["token"] and len(a["token"]) == 43
