"""A float anywhere in a request is taken or refused with a 400 and its stable code, never a 500.

JSON has one number type, and generated clients send ``2.0`` or ``0.5`` where a field is a
``number``; the event codec takes no float (``events.codec.check_safe``), so a float that slips
through a check reaches the store and fails there. Each test puts floats at every place of a valid
request (each field, each option, each list item) on the real games and looks at the answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import games
from tests.service.conftest import expect_reply, hello, receive

ENGINES = games.default_engines()
FLOATS = (0.5, 2.0, 1e-9, 1e300)
REFUSALS = {"bad_options", "bad_request", "unknown_game"}


def with_float_at_every_place(value: Any, number: float) -> Iterator[tuple[str, Any]]:
    """``(path, copy of value)`` with ``number`` in place of each leaf, and added to each list."""
    yield "", number
    if isinstance(value, dict):
        for key, item in value.items():
            for path, changed in with_float_at_every_place(item, number):
                yield f"[{key!r}]{path}", {**value, key: changed}
    elif isinstance(value, list):
        yield "[+]", [*value, number]
        for index, item in enumerate(value):
            for path, changed in with_float_at_every_place(item, number):
                yield f"[{index}]{path}", [*value[:index], changed, *value[index + 1 :]]


def full_bodies() -> Iterator[dict[str, Any]]:
    """A valid ``POST /games`` body per game with every field and every option given."""
    for name, engine in sorted(ENGINES.items()):
        options = {option: spec.default for option, spec in engine.options.items()}
        yield {
            "game": name, "seats": engine.min_seats, "options": options, "bots": {"1": "random"}, "bots_only": False,
            "clock": {"initial_s": 60, "increment_s": 5}, "on_timeout": "forfeit", "undo": True,
            "spectator_delay": {"versions": 2},
        }
        yield {"game": name, "clock": {"per_move_s": 30}, "spectator_delay": {"seconds": 3},
               "options": {"tile_order": ["nothing"]} if "tile_order" in engine.options else {}}


async def answer(response: Any) -> tuple[int, str | None]:
    body = await response.json()
    return response.status, (body.get("error") or {}).get("code")


async def test_a_float_in_any_field_of_post_games_is_taken_or_refused_as_bad_input(make_client):
    client = await make_client(engines=ENGINES)
    tried = taken = 0
    for body in full_bodies():
        for number in FLOATS:
            for path, changed in with_float_at_every_place(body, number):
                status, code = await answer(await client.post("/games", json=changed))
                tried += 1
                taken += status == 201
                assert status == 201 or (status == 400 and code in REFUSALS), (path, changed, status, code)
    assert tried > 200 and taken  # fractions of clocks and delays are taken (0.5, 2.0)


async def test_a_float_in_a_seat_request_a_rematch_or_a_query_is_bad_request(make_client):
    client = await make_client(engines=ENGINES)
    created = await client.post("/games", json={"game": "castle_panic", "seats": 2})
    game_id = (await created.json())["id"]
    seat = {"name": "ann", "request_id": "r" * 20, "client_seed": "abc"}
    for number in FLOATS:
        for path, changed in with_float_at_every_place(seat, number):
            status, code = await answer(await client.post(f"/games/{game_id}/seats", json=changed))
            assert (status, code) == (400, "bad_request"), (path, changed)
        status, code = await answer(await client.post(f"/games/{game_id}/rematch", json={"x": number}))
        assert (status, code) == (400, "bad_request")
        for route in ("/games?limit={}", "/games?offset={}", f"/games/{game_id}/events?from={{}}",
                      f"/games/{game_id}/events?limit={{}}", f"/games/{game_id}/state?at={{}}"):
            status, code = await answer(await client.get(route.format(number)))
            assert (status, code) == (400, "bad_request"), route


@pytest.mark.parametrize("number", FLOATS)
async def test_a_float_in_any_field_of_a_frame_is_refused_and_appends_nothing(make_client, number):
    client = await make_client(engines=ENGINES)
    created = await client.post("/games", json={"game": "castle_panic", "seats": 2})
    game_id = (await created.json())["id"]
    tokens = [(await (await client.post(f"/games/{game_id}/seats", json={"name": n})).json())["token"]
              for n in ("ann", "bob")]
    for path, frame in with_float_at_every_place({"type": "hello", "token": tokens[0], "since": 1}, number):
        ws = await client.ws_connect(f"/games/{game_id}/ws")
        await ws.send_json(frame)
        reply = await receive(ws)
        assert (reply["type"], reply.get("code")) in {("error", "bad_frame"), ("error", "unknown_frame")}, path
        await ws.close()
    ws, snapshot = await hello(client, game_id, tokens[0])
    move = snapshot["view"]["legal"][0]
    frame = {"type": "command", "id": "c", "command": move, "expected_version": snapshot["version"]}
    for index, (path, changed) in enumerate(with_float_at_every_place(frame, number)):
        if isinstance(changed, dict) and isinstance(changed.get("id"), str):
            changed = {**changed, "id": f"c{index}"}
        await ws.send_json(changed)
        reply = await receive(ws)
        assert reply["type"] == "error" and reply["code"] in {"bad_frame", "unknown_frame", "bad_command",
                                                              "unknown_command"}, (path, reply)
    await ws.send_json({**frame, "id": "after"})
    assert (await expect_reply(ws, "after"))[0]["type"] == "ack"  # nothing appended before: the version held
    await ws.close()
