"""The websocket's limits: the frame limit counts bytes, whatever the frame's encoding; the rate
limit never touches a client that waits for each answer and still stops a flood."""

from __future__ import annotations

import asyncio
import contextlib
import json

import aiohttp

from service.edge.keys import SETTINGS
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
    """Two seats playing Carcassonne as fast as the server answers, with limits low enough (5
    frames/s, burst 5) that even a loaded machine plays far above them: not one ``rate_limited``."""
    import random
    import time

    import games
    from tests.service.players import Player, play_all

    engines = games.default_engines()
    client = await make_client(engines=engines, ws_rate=5.0, ws_burst=5.0)
    settings = client.app[SETTINGS]
    game_id = (await (await client.post("/games", json={"game": "carcassonne", "seats": 2})).json())["id"]
    tokens = [(await (await client.post(f"/games/{game_id}/seats", json={"name": n})).json())["token"] for n in "ab"]
    players = []
    for seat, token in enumerate(tokens):
        ws, first = await hello(client, game_id, token)
        players.append(Player(ws, first, random.Random(seat), f"fast{seat}"))
    started = time.perf_counter()
    await play_all(players, max_commands=200)
    elapsed = time.perf_counter() - started
    busiest = max(player.sent for player in players)
    assert busiest > settings.ws_burst and busiest / elapsed > settings.ws_rate, (busiest, elapsed)
    errors = [frame for player in players for frame in player.frames if frame["type"] == "error"]
    assert not [frame for frame in errors if frame["code"] == "rate_limited"]


async def test_a_flood_sent_without_waiting_is_still_limited_and_closed(make_client):
    """A seat that keeps sending without waiting for answers is told ``rate_limited``, then closed
    (1008). The frames go out from their own task while the answers are read, until the server
    closes the socket, so a loaded machine that answers some frames before the next one arrives
    still sees a flood (bounded: 2,000 frames)."""
    client = await make_client(ws_rate=5.0, ws_burst=5.0)
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[1])  # seat 1: every draw is out of turn, nothing appends

    async def flood() -> None:
        for index in range(2000):
            if ws.closed:
                return
            await ws.send_json({"type": "command", "id": f"f{index}", "command": {"type": "draw", "args": {}}})

    sender = asyncio.create_task(flood())
    codes = []
    try:
        while True:
            message = await ws.receive(timeout=10)
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            codes.append(json.loads(message.data)["code"])
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionResetError):
            await sender
    assert "rate_limited" in codes and ws.close_code == 1008
