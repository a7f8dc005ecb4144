"""Appends made in one event-loop turn travel as one pipeline, and each keeps its own outcome.

The functional tests run against every server (the ``store`` / ``redis_url`` fixtures); the
ones that kill a server or flush its script cache start their own embedded Valkey.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
import redis.exceptions as rexc
from redis.asyncio.connection import Connection

from events.batcher import pack_commands
from events.embedded import EmbeddedServer
from events.envelope import NewEvent
from events.errors import ConflictError, InvalidEvent, StoreError, StoreUnavailable
from events.store import AppendResult, BatchStats, EventStore, cmds_key

TS = 1_700_000_000_000


def ev(type_: str, **payload: object) -> NewEvent:
    return NewEvent(type_, dict(payload))


def append(store: EventStore, game_id: str, events: list[NewEvent], expected: int, command_id: str | None = None):
    return store.append(game_id, events, expected_version=expected, command_id=command_id, actor=0, ts=TS)


@contextlib.asynccontextmanager
async def connected(url: str, **options: Any) -> AsyncIterator[EventStore]:
    store = await EventStore.connect(url, cluster=None, **options)
    try:
        yield store
    finally:
        await store.close()


# --- batches --------------------------------------------------------------------------------


async def test_concurrent_appends_to_many_games_go_as_one_batch_per_turn_with_exact_versions(store, new_game_id) -> None:
    games = [new_game_id() for _ in range(40)]
    sizes = {game: 1 + i % 3 for i, game in enumerate(games)}
    for round_ in range(5):
        results = await asyncio.gather(*(
            append(store, game, [ev("step", r=round_, part=p) for p in range(sizes[game])],
                   round_ * sizes[game], command_id=f"r{round_}")
            for game in games
        ))
        assert results == [
            AppendResult(round_ * sizes[game] + 1, (round_ + 1) * sizes[game], False) for game in games
        ]
    assert store.append_batches == BatchStats(batches=5, calls=200, largest=40)
    for game in games:
        events = await store.read(game)
        assert [(e.version, e.payload["r"], e.payload["part"]) for e in events] == [
            (r * sizes[game] + p + 1, r, p) for r in range(5) for p in range(sizes[game])
        ]
        assert [e.command_id for e in events] == [f"r{r}" for r in range(5) for _ in range(sizes[game])]
        assert await store.verify_chain(game) == events[-1].hash


async def test_two_appends_to_one_game_in_one_batch_have_exactly_one_winner_the_first(store, new_game_id) -> None:
    game, other = new_game_id(), new_game_id()
    results = await asyncio.gather(
        append(store, game, [ev("a"), ev("b")], 0, command_id="first"),
        append(store, other, [ev("x")], 0, command_id="first"),
        append(store, game, [ev("c")], 0, command_id="second"),
        return_exceptions=True,
    )
    assert store.append_batches == BatchStats(batches=1, calls=3, largest=3)
    assert list(results[:2]) == [AppendResult(1, 2, False), AppendResult(1, 1, False)]
    assert isinstance(results[2], ConflictError)
    assert (results[2].expected, results[2].actual) == (0, 2)
    assert [e.type for e in await store.read(game)] == ["a", "b"]
    assert await store.command_result(game, "second") is None
    await store.verify_chain(game)


async def test_appends_to_one_game_in_one_batch_run_in_the_order_they_were_made(store, new_game_id) -> None:
    # Each expects the version the previous one leaves: only the made order lets all three apply.
    game = new_game_id()
    results = await asyncio.gather(
        append(store, game, [ev("a")], 0, command_id="1"),
        append(store, game, [ev("b"), ev("c")], 1, command_id="2"),
        append(store, game, [ev("d")], 3, command_id="3"),
    )
    assert store.append_batches == BatchStats(batches=1, calls=3, largest=3)
    assert list(results) == [AppendResult(1, 1, False), AppendResult(2, 3, False), AppendResult(4, 4, False)]
    events = await store.read(game)
    assert [(e.version, e.type, e.command_id) for e in events] == [
        (1, "a", "1"), (2, "b", "2"), (3, "c", "2"), (4, "d", "3")
    ]
    await store.verify_chain(game)


async def test_duplicates_within_a_batch_and_across_batches_return_the_first_result(store, new_game_id) -> None:
    game = new_game_id()
    within = await asyncio.gather(*(append(store, game, [ev("a"), ev("b")], 0, command_id="c1") for _ in range(4)))
    assert within == [AppendResult(1, 2, False)] + [AppendResult(1, 2, True)] * 3
    across = await asyncio.gather(
        append(store, game, [ev("zzz")], 0, command_id="c1"),  # stale version, still the earlier result
        append(store, game, [ev("c")], 2, command_id="c2"),
        append(store, game, [ev("c")], 2, command_id="c2"),
    )
    assert list(across) == [AppendResult(1, 2, True), AppendResult(3, 3, False), AppendResult(3, 3, True)]
    assert store.append_batches == BatchStats(batches=2, calls=7, largest=4)
    assert [e.type for e in await store.read(game)] == ["a", "b", "c"]


async def test_an_oversize_burst_is_cut_into_batches_of_the_cap(store, redis_url, new_game_id) -> None:
    games = [new_game_id() for _ in range(10)]
    async with connected(redis_url, max_append_batch=4) as capped:
        results = await asyncio.gather(*(append(capped, game, [ev("a", i=i)], 0, command_id="c")
                                          for i, game in enumerate(games)))
        assert results == [AppendResult(1, 1, False)] * 10
        assert capped.append_batches == BatchStats(batches=3, calls=10, largest=4)
    assert [(await store.read(game))[0].payload for game in games] == [{"i": i} for i in range(10)]


async def test_each_append_of_a_batch_keeps_its_own_error(store, new_game_id) -> None:
    good, broken, stale = new_game_id(), new_game_id(), new_game_id()
    await append(store, stale, [ev("s")], 0)
    await store.redis.set(cmds_key(broken), "not a hash")  # this game's script fails on its first call
    results = await asyncio.gather(
        append(store, good, [ev("a")], 0, command_id="c"),
        append(store, broken, [ev("a")], 0, command_id="c"),
        append(store, stale, [ev("a")], 0, command_id="c"),
        append(store, good, [ev("b", v=0.5)], 1, command_id="d"),  # refused before sending
        append(store, good, [ev("b")], 1, command_id="e"),
        return_exceptions=True,
    )
    assert results[0] == AppendResult(1, 1, False)
    assert type(results[1]) is StoreError and "WRONGTYPE" in str(results[1])
    assert isinstance(results[2], ConflictError) and (results[2].expected, results[2].actual) == (0, 1)
    assert isinstance(results[3], InvalidEvent)
    assert results[4] == AppendResult(2, 2, False)
    assert store.append_batches == BatchStats(batches=2, calls=5, largest=4)  # the lone first append, then 4
    assert [e.type for e in await store.read(good)] == ["a", "b"]
    assert await store.read(broken) == []


async def test_a_caller_cancelled_before_its_batch_is_sent_is_left_out(store, new_game_id) -> None:
    dropped, kept = new_game_id(), new_game_id()
    first = asyncio.create_task(append(store, dropped, [ev("a")], 0, command_id="c"))
    second = asyncio.create_task(append(store, kept, [ev("a")], 0, command_id="c"))
    await asyncio.sleep(0)  # both have queued their call; the batch goes on the next turn
    first.cancel()
    assert await second == AppendResult(1, 1, False)
    with pytest.raises(asyncio.CancelledError):
        await first
    assert store.append_batches == BatchStats(batches=1, calls=1, largest=1)
    assert (await store.version(dropped), await store.version(kept)) == (0, 1)


async def test_close_lets_queued_and_sent_appends_finish(redis_url, store, new_game_id) -> None:
    games = [new_game_id() for _ in range(5)]
    closing = await EventStore.connect(redis_url, cluster=None)
    tasks = [asyncio.create_task(append(closing, game, [ev("a")], 0)) for game in games]
    await asyncio.sleep(0)  # queued, not sent yet
    await closing.close()
    assert [await task for task in tasks] == [AppendResult(1, 1, False)] * 5
    assert [await store.version(game) for game in games] == [1] * 5


@pytest.mark.parametrize("batch_appends", [True, False])
async def test_batching_can_be_turned_off_with_the_same_outcomes(redis_url, store, new_game_id, batch_appends) -> None:
    game = new_game_id()
    async with connected(redis_url, batch_appends=batch_appends) as chosen:
        results = await asyncio.gather(*(append(chosen, game, [ev("m", by=i)], 0, command_id=f"c{i}")
                                         for i in range(6)), return_exceptions=True)
        winners = [r for r in results if isinstance(r, AppendResult)]
        losers = [r for r in results if isinstance(r, ConflictError)]
        assert winners == [AppendResult(1, 1, False)] and len(losers) == 5
        assert {(r.expected, r.actual) for r in losers} == {(0, 1)}
        expected_stats = BatchStats(batches=1, calls=6, largest=6) if batch_appends else None
        assert chosen.append_batches == expected_stats
    if batch_appends:  # in one batch, the first made is the winner
        assert results[0] == AppendResult(1, 1, False)


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_batch must be >= 1, got 0"):
        EventStore(aioredis.Redis(), max_append_batch=0)  # nothing is sent


# --- the server going away, its script cache flushed ------------------------------------------


async def test_the_server_going_away_mid_batch_fails_every_waiter_and_applies_nothing(tmp_path) -> None:
    server = EmbeddedServer(tmp_path / "data", fsync="always").start()
    store = await EventStore.connect(server.url)
    games = [f"g{i}" for i in range(30)]
    try:
        await append(store, "g0", [ev("before")], 0, command_id="c0")
        # Paused, the server takes the batch in and runs none of it until it is killed.
        await store.redis.execute_command("CLIENT", "PAUSE", 10_000, "ALL")
        tasks = [asyncio.create_task(append(store, game, [ev("a"), ev("b"), ev("c")], 1 if game == "g0" else 0,
                                            command_id="c1"))
                 for game in games]
        tasks.append(asyncio.create_task(append(store, "g0", [ev("d")], 1, command_id="c2")))
        await asyncio.sleep(0.2)
        assert not any(task.done() for task in tasks)
        assert store.append_batches == BatchStats(batches=2, calls=32, largest=31)
        server.kill()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert [type(r) for r in results] == [StoreUnavailable] * 31
        assert len({id(r) for r in results}) == 31  # each waiter its own exception

        server.start()
        assert [await store.version(game) for game in games] == [1] + [0] * 29
        # The same calls again apply whole, as if never sent.
        again = await asyncio.gather(*(append(store, game, [ev("a"), ev("b"), ev("c")], 1 if game == "g0" else 0,
                                              command_id="c1") for game in games))
        assert again == [AppendResult(2, 4, False)] + [AppendResult(1, 3, False)] * 29
        await store.verify_chain("g0")
    finally:
        await store.close()
        server.stop()


async def test_a_server_killed_under_a_stream_of_batches_keeps_whole_appends_and_every_acknowledged_one(
    tmp_path,
) -> None:
    server = EmbeddedServer(tmp_path / "data", fsync="always").start()
    store = await EventStore.connect(server.url)
    acknowledged: dict[str, int] = {}
    failures: list[BaseException] = []

    async def writer(game: str) -> None:
        version = 0
        while True:
            try:
                result = await append(store, game, [ev("x", part=p) for p in range(3)], version,
                                      command_id=f"{game}-{version}")
            except StoreUnavailable as exc:
                failures.append(exc)
                return
            version = acknowledged[game] = result.last_version

    try:
        writers = [asyncio.create_task(writer(f"w{i}")) for i in range(20)]
        await asyncio.sleep(0.3)
        server.kill()
        await asyncio.wait_for(asyncio.gather(*writers), 10)
        assert len(failures) == 20
        assert store.append_batches.largest > 1

        server.start()
        for i in range(20):
            game = f"w{i}"
            events = await store.read(game)
            # Every acknowledged append is there, and nothing is a part of an append.
            assert len(events) in (acknowledged.get(game, 0), acknowledged.get(game, 0) + 3)
            assert [e.payload["part"] for e in events] == [0, 1, 2] * (len(events) // 3)
            await store.verify_chain(game)
    finally:
        await store.close()
        server.stop()


async def test_batches_reload_the_script_after_the_server_flushed_its_cache(tmp_path) -> None:
    async with EmbeddedServer(tmp_path / "data", fsync="everysec") as server, connected(server.url) as store:
        # Never loaded yet: the first batch gets NOSCRIPT for every call.
        first = await asyncio.gather(*(append(store, f"g{i}", [ev("a")], 0, command_id="c") for i in range(5)))
        assert first == [AppendResult(1, 1, False)] * 5
        await store.redis.script_flush()
        second = await asyncio.gather(
            *(append(store, f"g{i}", [ev("b")], 1, command_id="d") for i in range(5)),
            append(store, "g0", [ev("c")], 1, command_id="e"),
            append(store, "g1", [ev("a")], 0, command_id="c"),
            return_exceptions=True,
        )
        assert second[:5] == [AppendResult(2, 2, False)] * 5
        assert isinstance(second[5], ConflictError) and second[5].actual == 2
        assert second[6] == AppendResult(1, 1, True)
        await store.redis.script_flush()
        assert await append(store, "g0", [ev("c")], 2, command_id="e") == AppendResult(3, 3, False)
        assert store.append_batches == BatchStats(batches=3, calls=13, largest=7)
        assert [e.type for e in await store.read("g0")] == ["a", "b", "c"]


async def test_on_one_server_a_batch_takes_one_pooled_connection_and_no_redis_py_pipeline(tmp_path) -> None:
    async with EmbeddedServer(tmp_path / "data", fsync="everysec") as server, connected(server.url) as store:

        def no_pipeline(*_args: Any, **_kwargs: Any) -> Any:
            raise AssertionError("a one-server batch went through redis-py's pipeline")

        store.redis.pipeline = no_pipeline
        results = await asyncio.gather(*(append(store, f"g{i}", [ev("a")], 0, command_id="c") for i in range(6)))
        assert results == [AppendResult(1, 1, False)] * 6
        again = await asyncio.gather(
            append(store, "g0", [ev("b")], 0, command_id="d"),  # a conflict: that call's own error
            append(store, "g1", [ev("b")], 1, command_id="d"),
            return_exceptions=True,
        )
        assert isinstance(again[0], ConflictError) and again[1] == AppendResult(2, 2, False)
        assert await append(store, "g2", [ev("b")], 1, command_id="d") == AppendResult(2, 2, False)  # a lone one
        assert store.append_batches == BatchStats(batches=3, calls=9, largest=6)


def test_commands_are_packed_byte_for_byte_as_redis_py_packs_them() -> None:
    """The batch's own packing (one pass) writes what redis-py's ``pack_commands`` writes, for
    every kind of argument a script call is given, large bodies (past its 6,000-byte chunks),
    floats and text beyond ASCII included; and refuses what redis-py refuses."""
    connection = Connection()
    body = bytes(range(256)) * 40
    commands = [
        ("EVALSHA", "ab" * 20, 2, "game:{g}:events", "game:{g}:cmds", 0, "0:c1", "game:{g}:live", "", body),
        ("EVALSHA", "cd" * 20, 1, "k", -7, 2**70, 1.5, "été ♜", bytearray(b"ba"), memoryview(b"mv"), b""),
        ("WAIT", 1, 1000),
    ]
    assert pack_commands(commands, connection.encoder.encode) == b"".join(connection.pack_commands(commands))
    with pytest.raises(rexc.DataError):
        pack_commands([("SET", "k", True)], connection.encoder.encode)
