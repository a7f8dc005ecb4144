"""The lobby entry and when it must be recorded again."""

from __future__ import annotations

import dataclasses
import json

from projections.game import GameProjection
from projections.lobby import lobby_entry, needs_record
from service.fairness.draw_schemes import LegacyRandom
from tests.projections.helpers import opening, random_game
from tests.tinygame import TINY


def test_an_open_game_entry():
    projection = GameProjection.fold("g1", TINY, opening()[:2])
    assert lobby_entry(projection) == {
        "id": "g1", "game": "tiny", "status": "open", "version": 2, "seats": 2, "taken": 1,
        "names": ["ann", None], "created": 1000,
    }


def test_a_finished_game_entry_carries_the_summary():
    projection = GameProjection.fold("g1", TINY, random_game(LegacyRandom(2)))
    entry = lobby_entry(projection)
    assert entry["status"] == "finished" and entry["summary"] == projection.summary


def test_needs_record_only_when_the_lobby_would_show_something_else():
    envs = opening()
    seated = GameProjection.fold("g1", TINY, envs[:2])
    started = GameProjection.fold("g1", TINY, envs)
    stored = {"lobby": json.dumps(lobby_entry(seated))}
    assert needs_record(None, seated)
    assert needs_record({}, seated)
    assert not needs_record(stored, seated)
    assert needs_record(stored, started)
    assert not needs_record({"lobby": json.dumps(lobby_entry(started))}, started)


# --- on a real store (embedded, cluster, external): crash-safe ordering and the repair ---------


FUTURE_TS = 4_000_000_000_000
"""Creation time of the games these tests file: newer than every other game the session's
servers hold, so they head every newest-first page."""


def in_the_future(envelopes):
    return [dataclasses.replace(envelope, ts=FUTURE_TS) for envelope in envelopes]


async def stored_game(store, new_game_id, envelopes):
    """A game whose meta exists, folded from ``envelopes``: ``(game_id, projection)``."""
    game_id = new_game_id()
    await store.create_game(game_id, {"game": "tiny"})
    return game_id, GameProjection.fold(game_id, TINY, in_the_future(envelopes))


def listed(entries, game_id):
    return [entry["id"] for entry in entries].count(game_id)


async def test_a_status_change_cut_after_any_step_leaves_the_game_in_exactly_one_list(store, new_game_id):
    from events.store import lobby_key, lobby_shard, meta_key
    from projections.game import Status
    from projections.lobby import list_lobby, record

    envs = opening()
    for cut in ("after_add", "after_entry"):
        game_id, seated = await stored_game(store, new_game_id, envs[:2])
        started = GameProjection.fold(game_id, TINY, in_the_future(envs))
        await record(store, seated)
        # What record(started) writes, stopped where a crash would stop it.
        await store.redis.zadd(lobby_key("active", lobby_shard(game_id)), {game_id: started.created_ts})
        if cut == "after_entry":
            await store.redis.delete(meta_key(game_id))
            await store.create_game(game_id, {"game": "tiny"})
            await store.set_status(game_id, "active", started.created_ts, version=started.version,
                                   fields={"lobby": json.dumps(lobby_entry(started))})
            await store.redis.zadd(lobby_key("open", lobby_shard(game_id)), {game_id: started.created_ts})
        opened = await list_lobby(store, Status.OPEN, 200, 0)
        active = await list_lobby(store, Status.ACTIVE, 200, 0)
        expected = (1, 0) if cut == "after_add" else (0, 1)
        assert (listed(opened, game_id), listed(active, game_id)) == expected, cut
        await record(store, started)  # the next write completes the move
        assert listed(await list_lobby(store, Status.OPEN, 200, 0), game_id) == 0
        assert listed(await list_lobby(store, Status.ACTIVE, 200, 0), game_id) == 1
        for status in ("open", "active"):
            await store.redis.zrem(lobby_key(status, lobby_shard(game_id)), game_id)


async def test_an_older_lobby_write_never_overwrites_a_newer_one(store, new_game_id):
    from events.store import lobby_key, lobby_shard
    from projections.game import Status
    from projections.lobby import list_lobby, record

    game_id, finished = await stored_game(store, new_game_id, random_game(LegacyRandom(3)))
    started = GameProjection.fold(game_id, TINY, in_the_future(opening()))
    await record(store, finished)
    assert not await store.set_status(game_id, "active", 1, version=started.version, fields={"lobby": "{}"})
    await record(store, started)  # two nodes' writes crossing: the stale one changes nothing
    meta = await store.get_meta(game_id)
    assert meta["status"] == "finished" and json.loads(meta["lobby"])["status"] == "finished"
    assert listed(await list_lobby(store, Status.FINISHED, 200, 0), game_id) == 1
    assert listed(await list_lobby(store, Status.ACTIVE, 200, 0), game_id) == 0
    for status in ("active", "finished"):
        await store.redis.zrem(lobby_key(status, lobby_shard(game_id)), game_id)


async def test_the_repair_puts_back_a_game_missing_from_its_status_index(store, new_game_id):
    from events.store import lobby_key, lobby_shard
    from projections.lobby import record, repair

    game_id, started = await stored_game(store, new_game_id, opening())
    await record(store, started)
    assert not await repair(store, started)  # entry and index agree: nothing to do
    await store.redis.zrem(lobby_key("active", lobby_shard(game_id)), game_id)  # the entry is right, the index lost it
    assert not await store.is_filed(game_id, "active")
    assert await repair(store, started)
    assert await store.is_filed(game_id, "active")
    await store.redis.zrem(lobby_key("active", lobby_shard(game_id)), game_id)


async def test_games_listed_across_shards_come_back_in_score_order(store, new_game_id):
    from events.store import lobby_keys

    status = f"s-{new_game_id()}"
    games = [new_game_id() for _ in range(40)]
    try:
        for score, game in enumerate(games):
            await store.create_game(game, {"game": "tiny"})
            await store.set_status(game, status, score)
        assert await store.list_games(status, limit=200) == games[::-1]
        assert await store.list_games(status, limit=7, offset=5) == games[::-1][5:12]
        assert await store.list_games(status, limit=3, newest_first=False) == games[:3]
        assert await store.count_games(status) == 40
        assert len(set(lobby_keys(status))) == 17
    finally:
        for key in lobby_keys(status):
            await store.redis.delete(key)
