"""Every kind of bad input gets an error frame with a stable code, nothing is appended, the
socket and the service stay up."""

from __future__ import annotations

import asyncio

import aiohttp
import msgpack
import pytest

from tests.service.conftest import (
    command,
    create_tiny,
    expect_reply,
    hello,
    receive,
    receive_until,
    started_tiny,
    take_seat,
)


async def version_of(client, game_id):
    return (await (await client.get(f"/games/{game_id}")).json())["version"]


async def next_error(ws):
    frame, _ = await receive_until(ws, lambda f: f["type"] == "error")
    return frame


async def still_works(client, game_id, ws, command_id="ok-after"):
    await command(ws, command_id, {"type": "draw", "args": {}})
    reply, _ = await expect_reply(ws, command_id)
    assert reply["type"] == "ack", reply
    assert (await client.get("/healthz")).status == 200


@pytest.mark.parametrize(
    "raw, code",
    [
        ("{not json", "bad_json"),
        ("[1, 2]", "bad_frame"),
        ('"hello"', "bad_frame"),
        ('{"kind": "hello"}', "bad_frame"),
        ('{"type": "subscribe"}', "unknown_frame"),
        ('{"type": "command", "command": {"type": "draw", "args": {}}}', "bad_frame"),
        ('{"type": "command", "id": "", "command": {"type": "draw", "args": {}}}', "bad_frame"),
        ('{"type": "command", "id": "x", "command": "draw"}', "bad_frame"),
        ('{"type": "command", "id": "x", "command": {"type": "draw", "args": [1]}}', "bad_command"),
        ('{"type": "command", "id": "x", "command": {"type": "draw", "args": {}}, "expected_version": -1}', "bad_frame"),
        ('{"type": "hello", "since": "3"}', "bad_frame"),
    ],
)
async def test_malformed_frames_get_their_code_and_change_nothing(client, raw, code):
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[0])
    await ws.send_str(raw)
    error = await next_error(ws)
    assert error["code"] == code, error
    assert error["message"]
    assert await version_of(client, game_id) == 6
    await still_works(client, game_id, ws)


async def test_rule_refusals_carry_the_command_id_and_the_engine_code(client):
    game_id, tokens = await started_tiny(client)
    p0, snapshot = await hello(client, game_id, tokens[0])
    p1, _ = await hello(client, game_id, tokens[1])
    hand = snapshot["view"]["hand"]
    missing = next(card for card in (1, 2, 3, 4) if card not in hand)
    cases = [
        (p1, {"type": "draw", "args": {}}, "not_your_turn"),
        (p0, {"type": "play", "args": {"card": missing}}, "illegal_move"),
        (p0, {"type": "pass", "args": {}}, "illegal_move"),
        (p0, {"type": "play", "args": {"card": "four"}}, "bad_command"),
        (p0, {"type": "castle", "args": {}}, "unknown_command"),
    ]
    for index, (ws, cmd, code) in enumerate(cases):
        await command(ws, f"bad-{index}", cmd)
        reply, _ = await expect_reply(ws, f"bad-{index}")
        assert (reply["type"], reply["code"]) == ("error", code), (cmd, reply)
        assert repr(cmd["args"].get("card", cmd["type"])).strip("'") in reply["message"] or code == "not_your_turn"
    assert await version_of(client, game_id) == 6
    await still_works(client, game_id, p0)


async def test_spectators_cannot_command_and_commands_need_hello(client):
    game_id, _ = await started_tiny(client)
    ws = await client.ws_connect(f"/games/{game_id}/ws")
    await command(ws, "early", {"type": "draw", "args": {}})
    assert (await receive(ws))["code"] == "hello_required"
    await ws.send_json({"type": "hello"})
    assert (await receive(ws))["type"] == "snapshot"
    await command(ws, "spy", {"type": "draw", "args": {}})
    error = await receive(ws)
    assert (error["code"], error["id"]) == ("spectator", "spy")
    await ws.send_json({"type": "hello"})
    assert (await receive(ws))["code"] == "bad_frame"  # one hello per socket
    assert await version_of(client, game_id) == 6


async def test_a_wrong_token_is_unauthorized_and_the_socket_may_say_hello_again(client):
    game_id, tokens = await started_tiny(client)
    _, foreign = await started_tiny(client)
    ws = await client.ws_connect(f"/games/{game_id}/ws")
    for token in ("not-a-token", foreign[0], 42):
        await ws.send_json({"type": "hello", "token": token})
        error = await receive(ws)
        assert error["code"] in ("unauthorized", "bad_frame"), error
        assert error["code"] == ("bad_frame" if token == 42 else "unauthorized")
    await ws.send_json({"type": "hello", "token": tokens[0]})
    snapshot = await receive(ws)
    assert (snapshot["type"], snapshot["seat"]) == ("snapshot", 0)


async def test_commands_before_the_start_and_after_the_end_are_refused(client):
    game_id = await create_tiny(client, target=1)
    token = (await take_seat(client, game_id, "ann"))["token"]
    ws, _ = await hello(client, game_id, token)
    await command(ws, "early", {"type": "draw", "args": {}})
    assert (await expect_reply(ws, "early"))[0]["code"] == "not_started"
    await take_seat(client, game_id, "bob")
    snapshot_view = (await (await client.get(f"/games/{game_id}", headers={"Authorization": f"Bearer {token}"})).json())
    card = snapshot_view["view"]["hand"][0]
    await command(ws, "win", {"type": "play", "args": {"card": card}})
    assert (await expect_reply(ws, "win"))[0]["type"] == "ack"
    await command(ws, "late", {"type": "draw", "args": {}})
    assert (await expect_reply(ws, "late"))[0]["code"] == "game_over"
    assert (await (await client.get(f"/games/{game_id}")).json())["status"] == "finished"


async def test_an_oversized_frame_gets_frame_too_large_and_the_socket_lives(make_client):
    client = await make_client(ws_max_frame=512)
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[0])
    await ws.send_str('{"type": "command", "id": "big", "command": {"type": "draw", "args": {"pad": "' + "x" * 600 + '"}}}')
    error = await next_error(ws)
    assert error["code"] == "frame_too_large"
    assert await version_of(client, game_id) == 6
    await still_works(client, game_id, ws)


async def test_a_frame_far_above_the_limit_closes_the_socket_with_1009(make_client):
    client = await make_client(ws_max_frame=512)
    game_id, _ = await started_tiny(client)
    ws = await client.ws_connect(f"/games/{game_id}/ws")
    await ws.send_str("x" * 5000)
    message = await ws.receive()
    assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING)
    assert ws.close_code == 1009
    assert (await client.get("/healthz")).status == 200


async def test_a_flood_is_rate_limited_and_nothing_extra_is_appended(make_client):
    client = await make_client(ws_rate=1, ws_burst=3)
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[1])  # seat 1: every draw is out of turn, nothing appends
    for index in range(10):
        await command(ws, f"f{index}", {"type": "draw", "args": {}})
    codes = []
    while len(codes) < 10:
        frame = await receive(ws)
        if frame["type"] == "error":
            codes.append((frame["id"], frame["code"]))
    # The ten frames arrive together: f0 found the socket idle (free, as the answered hello was),
    # f1-f3 were sent before f0's answer and take the burst, the six after them are limited.
    assert [code for _, code in codes].count("rate_limited") == 6
    assert [code for _, code in codes[:4]] == ["not_your_turn"] * 4
    assert [frame_id for frame_id, _ in codes] == [f"f{index}" for index in range(10)]
    assert await version_of(client, game_id) == 6


async def test_msgpack_garbage_is_bad_json(client):
    game_id, _ = await started_tiny(client)
    ws = await client.ws_connect(f"/games/{game_id}/ws", protocols=("donjon.msgpack",))
    await ws.send_bytes(b"\xc1\xc1\xc1")
    message = await ws.receive()
    assert msgpack.unpackb(message.data)["code"] == "bad_json"


async def test_a_socket_for_an_unknown_game_is_refused_before_the_upgrade(client):
    with pytest.raises(aiohttp.WSServerHandshakeError) as info:
        await client.ws_connect("/games/0000000000000000/ws")
    assert info.value.status == 404


async def test_since_ahead_of_the_game_is_a_bad_frame(client):
    game_id, _ = await started_tiny(client)
    ws = await client.ws_connect(f"/games/{game_id}/ws")
    await ws.send_json({"type": "hello", "since": 99})
    error = await receive(ws)
    assert error["code"] == "bad_frame" and "99" in error["message"]


@pytest.mark.parametrize(
    "frame, code",
    [
        ({"type": "command", "id": "c1", "command": "draw"}, "bad_frame"),
        ({"type": "command", "id": "c1", "command": {"type": "draw", "arg": {}}}, "bad_frame"),
        ({"type": "command", "id": "c1", "command": {"type": "draw"}, "expected_version": "6"}, "bad_frame"),
        ({"type": "command", "id": "c1", "command": {"type": "draw"}, "expect_version": 6}, "bad_frame"),
        ({"type": "command", "id": "c1", "command": {"type": "draw", "args": 3}}, "bad_command"),
    ],
)
async def test_a_refused_command_frame_carries_its_readable_id(client, frame, code):
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[0])
    await ws.send_json(frame)
    error = await next_error(ws)
    assert (error["code"], error.get("id")) == (code, "c1"), error
    assert await version_of(client, game_id) == 6


async def test_unknown_fields_of_a_frame_are_refused_naming_them(client):
    game_id, tokens = await started_tiny(client)
    ws = await client.ws_connect(f"/games/{game_id}/ws")
    await ws.send_json({"type": "hello", "token": tokens[0], "snice": 3})
    error = await receive(ws)
    assert error["code"] == "bad_frame" and "['snice']" in error["message"] and "id" not in error
    await ws.send_json({"type": "hello", "token": tokens[0]})
    assert (await receive(ws))["type"] == "snapshot"


def deep_json(depth: int, inner: str = "") -> str:
    return "[" * depth + inner + "]" * depth


def deep_msgpack(depth: int) -> bytes:
    return b"\x91" * depth + b"\xc0"  # fixarray of one element, depth times, around nil


DEEP_JSON = [
    deep_json(33),
    deep_json(1_000),
    deep_json(20_000),
    '{"type": "command", "id": "deep", "command": {"type": "draw", "args": {"x": ' + deep_json(2_000) + "}}}",
    '{"type": "hello", "token": ' + deep_json(5_000) + "}",
    "{" * 3_000,
    '{"a":' * 5_000 + "1" + "}" * 5_000,
]


@pytest.mark.parametrize("raw", DEEP_JSON, ids=lambda raw: f"{raw[:12]}...{len(raw)}")
async def test_deeply_nested_json_frames_are_bad_json_and_change_nothing(make_client, raw):
    client = await make_client(ws_max_frame=65_536)
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[0])
    await ws.send_str(raw)
    error = await next_error(ws)
    assert error["code"] == "bad_json", error
    assert await version_of(client, game_id) == 6
    await still_works(client, game_id, ws)


@pytest.mark.parametrize("depth", [33, 600, 1_100, 20_000])
async def test_deeply_nested_msgpack_frames_are_bad_json_and_change_nothing(client, depth):
    game_id, tokens = await started_tiny(client)
    ws = await client.ws_connect(f"/games/{game_id}/ws", protocols=("donjon.msgpack",))
    await ws.send_bytes(msgpack.packb({"type": "hello", "token": tokens[0]}))
    assert msgpack.unpackb((await ws.receive()).data)["type"] == "snapshot"
    empty_args = b"\xa4args\x80"  # "args": {}
    deep_args = b"\xa4args\x81\xa1x" + deep_msgpack(depth)  # "args": {"x": [[[...]]]}
    command_frame = msgpack.packb({"type": "command", "id": "deep", "command": {"type": "draw", "args": {}}})
    for raw in (deep_msgpack(depth), command_frame.replace(empty_args, deep_args)):
        await ws.send_bytes(raw)
        frame = msgpack.unpackb((await ws.receive()).data)
        assert (frame["type"], frame["code"]) == ("error", "bad_json"), frame
    assert await version_of(client, game_id) == 6


async def test_fuzzed_frames_never_answer_internal(client):
    """Random mutations of valid frames, nested ones among them: each gets a stable code."""
    import random

    rng = random.Random(9)
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[1])  # seat 1: out of turn, nothing may append
    seeds = ['{"type": "command", "id": "z", "command": {"type": "draw", "args": {}}}', '{"type": "hello"}']
    alphabet = '[]{}":,0123456789abc -\\'
    for index in range(300):
        text = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 6)):
            position = rng.randrange(len(text) + 1)
            if rng.random() < 0.2:
                text[position:position] = rng.choice("[{") * rng.randint(30, 3_000)
            else:
                text[position:position] = rng.choice(alphabet)
        await ws.send_str("".join(text))
        reply = await receive(ws)
        assert reply["type"] == "error" and reply["code"] != "internal", (index, reply)
        await asyncio.sleep(0)  # let the socket go idle: these are not a flood
    assert await version_of(client, game_id) == 6


async def test_fuzzed_msgpack_frames_never_answer_internal(client):
    """The same on the msgpack codec: byte mutations of valid frames, deep nesting among them."""
    import random

    rng = random.Random(11)
    game_id, tokens = await started_tiny(client)
    ws = await client.ws_connect(f"/games/{game_id}/ws", protocols=("donjon.msgpack",))
    await ws.send_bytes(msgpack.packb({"type": "hello", "token": tokens[1]}))
    assert msgpack.unpackb((await ws.receive()).data)["type"] == "snapshot"
    seeds = [
        msgpack.packb({"type": "command", "id": "z", "command": {"type": "draw", "args": {}}}),
        msgpack.packb({"type": "hello", "since": 3}),
    ]
    for index in range(300):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            position = rng.randrange(len(data) + 1)
            if rng.random() < 0.2:
                data[position:position] = rng.choice([b"\x91", b"\x81\xa1x"]) * rng.randint(30, 3_000)
            else:
                data[position:position] = bytes([rng.randrange(256)])
        await ws.send_bytes(bytes(data))
        reply = msgpack.unpackb((await ws.receive()).data)
        assert reply["type"] == "error" and reply["code"] != "internal", (index, reply)
        await asyncio.sleep(0)
    assert await version_of(client, game_id) == 6
