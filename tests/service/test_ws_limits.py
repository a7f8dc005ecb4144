"""The websocket's limits: the frame limit counts bytes, whatever the frame's encoding; the rate
limit never touches a client that waits for each answer and still stops a flood."""

from __future__ import annotations

import json

import aiohttp

from service.keys import SETTINGS
from tests.service.conftest import hello, receive_until, started_tiny


async def test_the_frame_limit_counts_the_bytes_of_a_text_frame_not_its_characters(make_client):
    client = await make_client(ws_max_frame=512)
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[0])
    text = '{"type": "command", "id": "wide", "command": {"type": "draw", "args": {"pad": "' + "é" * 300 + '"}}}'
    assert len(text) < 512 < len(text.encode())
    await ws.send_str(text)
    error, _ = await receive_until(ws, lambda frame: frame["type"] == "error")
    assert (error["code"], error["message"]) == (
        "frame_too_large", f"frame of {len(text.encode())} bytes is above the limit of 512"
    )
    assert "id" not in error


async def test_a_client_that_waits_for_each_ack_is_never_limited_at_full_speed(make_client):
    """The default limits (20 frames/s, burst 40) and two seats playing Carcassonne as fast as the
    server answers: far more frames per second than the rate, and not one ``rate_limited``."""
    import random
    import time

    import games
    from tests.service.players import Player, play_all

    engines = games.default_engines()
    client = await make_client(engines=engines)
    settings = client.app[SETTINGS]
    game_id = (await (await client.post("/games", json={"game": "carcassonne", "seats": 2})).json())["id"]
    tokens = [(await (await client.post(f"/games/{game_id}/seats", json={"name": n})).json())["token"] for n in "ab"]
    players = []
    for seat, token in enumerate(tokens):
        ws, first = await hello(client, game_id, token)
        players.append(Player(ws, first, random.Random(seat), f"fast{seat}"))
    started = time.perf_counter()
    await play_all(players, max_commands=500)
    elapsed = time.perf_counter() - started
    busiest = max(player.sent for player in players)
    assert busiest > settings.ws_burst and busiest / elapsed > settings.ws_rate, (busiest, elapsed)
    errors = [frame for player in players for frame in player.frames if frame["type"] == "error"]
    assert not [frame for frame in errors if frame["code"] == "rate_limited"]


async def test_a_flood_sent_without_waiting_is_still_limited_and_closed(make_client):
    client = await make_client()  # the default limits
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[1])  # seat 1: every draw is out of turn, nothing appends
    for index in range(200):
        await ws.send_json({"type": "command", "id": f"f{index}", "command": {"type": "draw", "args": {}}})
    codes = []
    while True:
        message = await ws.receive(timeout=5)
        if message.type != aiohttp.WSMsgType.TEXT:
            break
        codes.append(json.loads(message.data)["code"])
    assert "rate_limited" in codes and ws.close_code == 1008
