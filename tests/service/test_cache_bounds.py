"""The node's game cache stays within DONJON_CACHE_GAMES and DONJON_CACHE_BYTES while many games
are loaded, forgets finished games first, and never forgets a game with sockets on the node or
with bots it drives (GameService and apps on the embedded Valkey)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from events.store import EventStore
from projections.game import Status
from service.edge.keys import SERVICE
from service.play.cache import estimated_bytes
from service.play.game_service import GameService
from tests.service.conftest import ENGINES, hello


@pytest.fixture
async def event_store(embedded_redis_url):
    store = await EventStore.connect(embedded_redis_url)
    yield store
    await store.close()


async def new_games(store, active: int, finished: int) -> tuple[list[str], list[str]]:
    """``active`` games under way and ``finished`` games played to the end (one card wins)."""
    creator = GameService(store, ENGINES)
    try:
        ids: dict[str, list[str]] = {"active": [], "finished": []}
        for index in range(active + finished):
            projection = await creator.create_game("tiny", {"target": 1}, 2)
            for name in ("ann", "bob"):
                await creator.take_seat(projection.game_id, name)
            if index >= active:
                game = await creator.load(projection.game_id)
                seat = game.engine.waiting_for(game.state)[0]
                play = next(m for m in game.engine.legal_moves(game.state, seat) if m["type"] == "play")
                await creator.execute(projection.game_id, seat, "win", play)
                assert (await creator.load(projection.game_id)).status is Status.FINISHED
            ids["active" if index < active else "finished"].append(projection.game_id)
        return ids["active"], ids["finished"]
    finally:
        await creator.close()


def check_bounds(service: GameService, max_games: int, max_bytes: int) -> None:
    cache = service.cache
    cached = [cache.cached(game_id) for game_id in list(cache._projections)]
    assert len(cache) <= max_games
    assert cache.bytes <= max_bytes
    assert cache.bytes == sum(estimated_bytes(p) for p in cached if p is not None)
    assert service.metrics.cache_games.value() == len(cache)


async def test_the_cache_never_exceeds_its_bounds_while_many_games_are_loaded(event_store):
    active, finished = await new_games(event_store, 60, 60)
    one = estimated_bytes(await GameService(event_store, ENGINES).load(finished[0]))
    max_games, max_bytes = 25, one * 15  # the byte bound binds before the count bound
    reader = GameService(event_store, ENGINES, cache_games=max_games, cache_bytes=max_bytes)
    order = active + finished
    random.Random(7).shuffle(order)
    try:
        for game_id in order * 2:
            projection = await reader.load(game_id)
            assert projection.game_id == game_id and projection.version > 0
            check_bounds(reader, max_games, max_bytes)
        assert reader.metrics.cache_evictions.value() > 0
        small = GameService(event_store, ENGINES, cache_games=10)
        for game_id in order:
            await small.load(game_id)
            check_bounds(small, 10, small.cache.max_bytes)
        assert len(small.cache) == 10
    finally:
        await reader.close()


async def test_finished_games_are_forgotten_before_games_under_way(event_store):
    active, finished = await new_games(event_store, 8, 30)
    reader = GameService(event_store, ENGINES, cache_games=12)
    try:
        for game_id in active + finished:
            await reader.load(game_id)
        assert all(reader.cached(game_id) is not None for game_id in active)
        assert [g for g in finished if reader.cached(g) is not None] == finished[-4:]
        for game_id in finished[:20]:  # only finished ones come in: still no active game goes
            await reader.load(game_id)
        assert all(reader.cached(game_id) is not None for game_id in active)
    finally:
        await reader.close()


class _Keeps:
    """A node's watcher that keeps the games of a set (as the reader keeps games with sockets)."""

    def __init__(self, kept: set[str]) -> None:
        self.kept = kept

    def appending(self, game_id: str, version: int) -> None:
        pass

    def append_done(self, game_id: str, version: int) -> None:
        pass

    def appended(self, append: Any, after: Any) -> None:
        pass

    def keeps(self, game_id: str) -> bool:
        return game_id in self.kept


async def test_games_the_cache_must_keep_stay_even_above_the_bound(event_store):
    active, finished = await new_games(event_store, 5, 20)
    reader = GameService(event_store, ENGINES, cache_games=3)
    kept = set(finished[:4])
    reader.listen(_Keeps(kept))
    try:
        order = finished + active
        for index, game_id in enumerate(order):
            await reader.load(game_id)
            assert kept & set(reader.cache._projections) == kept & set(order[: index + 1])
        assert all(reader.cached(game_id) is not None for game_id in kept)
        assert len(reader.cache) == len(kept)  # over the bound only by the games it must keep
        kept.clear()  # the sockets went away: the next load trims back to the bound
        await reader.load(active[0])
        assert len(reader.cache) == 3
    finally:
        await reader.close()


async def test_a_game_with_a_socket_on_the_node_is_never_forgotten(make_client):
    client = await make_client(cache_games=3)
    service = client.app[SERVICE]
    watched = (await service.create_game("tiny", {}, 2)).game_id
    ws, _ = await hello(client, watched)
    others = [(await service.create_game("tiny", {}, 2)).game_id for _ in range(12)]
    for game_id in others:
        assert (await client.get(f"/games/{game_id}")).status == 200
        assert service.cached(watched) is not None
        assert len(service.cache) <= 3
    await ws.close()


async def test_a_game_whose_bot_this_node_watches_is_never_forgotten(event_store):
    creator = GameService(event_store, ENGINES, bot_takeover=60)
    bot_game = (await creator.create_game("tiny", {}, 2, {"0": "first"})).game_id
    await creator.take_seat(bot_game, "bob")
    await creator.close()  # the bot owes its move and nobody drives it
    active, _ = await new_games(event_store, 6, 0)
    reader = GameService(event_store, ENGINES, bot_takeover=60, cache_games=2)
    try:
        await reader.load(bot_game)
        assert reader.bot_scheduler.busy(bot_game)  # a takeover watch, 60 s away
        for game_id in active:
            await reader.load(game_id)
            assert reader.cached(bot_game) is not None and len(reader.cache) <= 2
    finally:
        await reader.close()
