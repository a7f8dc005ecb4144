"""The due-bots index (events/due.py) against the embedded Valkey: listing, moving forward only,
unlisting only what the caller read, and the oldest listings first across the shards."""

from __future__ import annotations

import uuid

import pytest

from events.due import DUE_SHARDS, DueBots, due_key, shard_of
from events.store import EventStore


@pytest.fixture
async def due(embedded_redis_url):
    store = await EventStore.connect(embedded_redis_url)
    yield store.due_bots
    await store.close()


def ids(n: int) -> list[str]:
    return [f"due-{uuid.uuid4().hex[:12]}" for _ in range(n)]


def test_each_shard_is_a_key_of_its_own_slot_and_every_game_has_one():
    assert due_key(3) == "donjon:due-bots:{3}"
    assert len({due_key(s) for s in range(DUE_SHARDS)}) == DUE_SHARDS
    assert {shard_of(g) for g in ids(400)} == set(range(DUE_SHARDS))


async def test_listed_games_come_back_oldest_first_and_only_before_the_time_asked(due):
    games = ids(40)
    for index, game_id in enumerate(games):
        await due.mark(game_id, 1_000 + index)
    found = [(g, s) for g, s in await due.due(1_000 + 29, 10_000) if g in games]
    assert found == [(g, float(1_000 + i)) for i, g in enumerate(games[:30])]
    assert len(await due.due(1_000 + 29, 5)) <= 5
    for game_id in games:
        await due.drop(game_id, (await _score(due, game_id)))


async def test_bump_only_moves_a_listed_game_forward(due):
    listed, unlisted = ids(2)
    await due.mark(listed, 5_000)
    await due.bump(listed, 4_000)
    assert await _score(due, listed) == 5_000
    await due.bump(listed, 6_000)
    assert await _score(due, listed) == 6_000
    await due.bump(unlisted, 6_000)
    assert await _score(due, unlisted) is None
    assert await due.drop(listed, 6_000)


async def test_drop_unlists_only_a_game_still_listed_at_the_time_read(due):
    (game_id,) = ids(1)
    await due.mark(game_id, 7_000)
    await due.mark(game_id, 8_000)  # listed again, by an append after the caller's read
    assert not await due.drop(game_id, 7_000)
    assert await _score(due, game_id) == 8_000
    assert await due.drop(game_id, 8_000)
    assert await _score(due, game_id) is None


async def _score(due: DueBots, game_id: str) -> float | None:
    score = await due.redis.zscore(due_key(shard_of(game_id)), game_id)
    return None if score is None else float(score)
