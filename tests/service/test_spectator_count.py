"""The spectator count: ``GET /games/{id}``'s ``spectators`` (this node's spectator sockets) and the
``spectators`` frame every socket of the game gets when it changes; seats never count, and the frame
names nobody."""

from __future__ import annotations

from typing import Any

from tests.service.conftest import hello, receive, started_tiny


async def spectators_of(client: Any, game_id: str) -> int:
    response = await client.get(f"/games/{game_id}")
    assert response.status == 200
    return int((await response.json())["spectators"])


async def next_count(ws: Any) -> dict[str, Any]:
    while True:
        frame = await receive(ws, counts=True)
        if frame["type"] == "spectators":
            return frame


async def test_the_count_follows_spectator_sockets_and_reaches_every_socket(client):
    game_id, tokens = await started_tiny(client)
    seat, _ = await hello(client, game_id, tokens[0])
    assert await spectators_of(client, game_id) == 0  # a seat's socket is no spectator
    first, _ = await hello(client, game_id)
    second, _ = await hello(client, game_id)
    assert await spectators_of(client, game_id) == 2
    told = await next_count(seat)
    assert told == {"type": "spectators", "game": game_id, "count": 2}  # a crowd at once: one frame
    assert (await next_count(first))["count"] == 2
    await second.close()
    assert (await next_count(seat))["count"] == 1
    assert (await next_count(first))["count"] == 1
    assert await spectators_of(client, game_id) == 1
    for ws in (seat, first):
        await ws.close()


async def test_a_game_nobody_watches_here_counts_none(client):
    game_id, _ = await started_tiny(client)
    assert await spectators_of(client, game_id) == 0
