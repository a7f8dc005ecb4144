"""Spectators' frames batched (``DONJON_WS_SPECTATOR_BATCH_MS``), over real sockets on a real
store: a spectator still gets every version exactly once and in order, the first update after a
quiet spell at once, the ones that follow within the window together, never before it; seats are
never held back."""

from __future__ import annotations

import time
from typing import Any

from tests.service.conftest import command, expect_reply, hello, receive, started_tiny

WINDOW_MS = 400


async def versions_until(ws: Any, last: int) -> list[tuple[int, float]]:
    """Each version a socket is shown up to ``last``, with when it arrived."""
    seen: list[tuple[int, float]] = []
    while not seen or seen[-1][0] < last:
        frame = await receive(ws)
        if frame["type"] == "update":
            now = time.monotonic()
            seen += [(event["version"], now) for event in frame["events"]]
    return seen


async def draws(seats: list[Any], moves: int) -> tuple[int, list[float]]:
    """``moves`` draws, the seats in turn, each sent once the previous one is acked: the last
    version, and when each ack came."""
    acked, version = [], 0
    for n in range(moves):
        seat = seats[n % 2]
        await command(seat, f"d{n}", {"type": "draw", "args": {}})
        reply, _ = await expect_reply(seat, f"d{n}")
        assert reply["type"] == "ack", reply
        acked.append(time.monotonic())
        version = reply["version"]
    return version, acked


async def test_a_spectator_gets_every_version_once_in_order_batched_within_the_window(make_client):
    client = await make_client(ws_spectator_batch_ms=WINDOW_MS)
    game_id, tokens = await started_tiny(client)
    seats = [(await hello(client, game_id, token))[0] for token in tokens]
    spectator, first = await hello(client, game_id)
    start = first["version"]
    last, acked = await draws(seats, 4)
    seen = await versions_until(spectator, last)
    assert [version for version, _ in seen] == list(range(start + 1, last + 1))  # each once, in order
    first_arrival = seen[0][1]
    assert first_arrival - acked[0] < WINDOW_MS / 1000  # after a quiet spell: at once
    later = [arrived for version, arrived in seen if version > seen[0][0]]
    assert later and min(later) - first_arrival >= WINDOW_MS / 1000 * 0.9  # the rest waited for the window
    for ws in (*seats, spectator):
        await ws.close()


async def test_with_batching_off_each_update_leaves_at_once(make_client):
    client = await make_client(ws_spectator_batch_ms=0)
    game_id, tokens = await started_tiny(client)
    seats = [(await hello(client, game_id, token))[0] for token in tokens]
    spectator, first = await hello(client, game_id)
    last, acked = await draws(seats, 2)
    seen = await versions_until(spectator, last)
    assert [version for version, _ in seen] == list(range(first["version"] + 1, last + 1))
    assert seen[-1][1] - acked[-1] < WINDOW_MS / 1000
    for ws in (*seats, spectator):
        await ws.close()
