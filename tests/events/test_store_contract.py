"""The event store contract, run with identical assertions against every server.

The ``store`` fixture is parametrized over the embedded Valkey and, when ``DONJON_TEST_REDIS_URL``
is set, an external Redis (tests/conftest.py). Functional tests: a real server, no mocks.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import msgpack
import pytest

from events import codec
from events.chain import link_hash, verify_envelopes
from events.envelope import GENESIS_HASH, NewEvent
from events.errors import (
    ChainBroken,
    ConflictError,
    GameExists,
    InvalidEvent,
    StoreError,
    StoreUnavailable,
    UnknownGame,
)
from events.store import AppendResult, EventStore, cmds_key, events_key, lobby_keys
from service.fairness.draw_schemes import LegacyRandom

TS = 1_700_000_000_000


def ev(type_: str, **payload: object) -> NewEvent:
    return NewEvent(type_, dict(payload))


async def append(store: EventStore, game_id: str, events: list[NewEvent], expected: int, command_id: str | None = None,
                 **kw: Any) -> AppendResult:
    return await store.append(game_id, events, expected_version=expected, command_id=command_id,
                              actor=kw.pop("actor", 0), ts=kw.pop("ts", TS), **kw)


# --- append and read -----------------------------------------------------------------------


async def test_appended_events_read_back_as_envelopes_with_versions_and_chain(store, new_game_id) -> None:
    game = new_game_id()
    first = await store.append(game, [ev("game.created", rules="castle")], expected_version=0,
                               command_id=None, actor=None, ts=TS)
    command = {"type": "place", "args": {"x": 1, "y": 0}}
    second = await store.append(game, [ev("placed", x=1, y=0), ev("scored", seat=1, points=4)],
                                expected_version=1, command_id="cmd-a", actor=1, command=command, ts=TS + 5)
    assert (first, second) == (AppendResult(1, 1, False), AppendResult(2, 3, False))

    events = await store.read(game)
    assert [(e.version, e.type, e.payload, e.command_id, e.actor, e.ts) for e in events] == [
        (1, "game.created", {"rules": "castle"}, None, None, TS),
        (2, "placed", {"x": 1, "y": 0}, "cmd-a", 1, TS + 5),
        (3, "scored", {"seat": 1, "points": 4}, "cmd-a", 1, TS + 5),
    ]
    assert [e.command for e in events] == [None, command, None]
    assert {e.game_id for e in events} == {game} and {e.schema for e in events} == {1}
    assert events[0].prev_hash == GENESIS_HASH
    assert [e.prev_hash for e in events[1:]] == [e.hash for e in events[:-1]]
    assert events[1].hash == link_hash(events[0].hash, codec.encode_body(events[1]))
    assert await store.version(game) == 3
    assert await store.head(game) == (3, events[2].hash)


async def test_read_from_and_to_version_is_inclusive(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("n", i=i) for i in range(1, 8)], 0)
    assert [e.version for e in await store.read(game, 3)] == [3, 4, 5, 6, 7]
    assert [e.version for e in await store.read(game, 3, 5)] == [3, 4, 5]
    assert [e.version for e in await store.read(game, 7, 7)] == [7]
    assert await store.read(game, 8) == []


async def test_reading_a_long_stream_pages_without_gaps(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("n", i=i) for i in range(2500)], 0)
    events = await store.read(game)
    assert [e.version for e in events] == list(range(1, 2501))
    assert [e.payload["i"] for e in events[998:1003]] == [998, 999, 1000, 1001, 1002]


async def test_an_unknown_game_has_version_zero_and_no_events(store, new_game_id) -> None:
    game = new_game_id()
    assert await store.version(game) == 0
    assert await store.head(game) == (0, GENESIS_HASH)
    assert await store.read(game) == []
    assert await store.get_meta(game) is None


async def test_schema_is_stored_as_given(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [NewEvent("moved", {"to": 3}, schema=2)], 0)
    (event,) = await store.read(game)
    assert (event.type, event.schema, event.payload) == ("moved", 2, {"to": 3})


# --- conflicts and atomic batches -----------------------------------------------------------


async def test_stale_expected_version_is_a_conflict_naming_the_actual_version(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a"), ev("b")], 0)
    with pytest.raises(ConflictError) as conflict:
        await append(store, game, [ev("c")], 1)
    assert (conflict.value.expected, conflict.value.actual, conflict.value.game_id) == (1, 2, game)
    with pytest.raises(ConflictError) as ahead:
        await append(store, game, [ev("c")], 5)
    assert (ahead.value.expected, ahead.value.actual) == (5, 2)
    assert [e.type for e in await store.read(game)] == ["a", "b"]


async def test_conflicting_append_records_no_command_id(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a")], 0)
    with pytest.raises(ConflictError):
        await append(store, game, [ev("b")], 0, command_id="late")
    # The refused command may be decided again on the new version and then applies.
    assert await append(store, game, [ev("b")], 1, command_id="late") == AppendResult(2, 2, False)


async def test_batch_with_one_unsafe_payload_appends_nothing(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a")], 0)
    with pytest.raises(InvalidEvent, match=r"bad payload\['v'\] is a float"):
        await append(store, game, [ev("ok", v=1), ev("bad", v=0.5), ev("ok", v=2)], 1, command_id="c")
    assert [e.type for e in await store.read(game)] == ["a"]
    # Nothing recorded the command id either: the corrected batch applies.
    assert await append(store, game, [ev("ok", v=1)], 1, command_id="c") == AppendResult(2, 2, False)


async def test_a_server_side_refusal_appends_nothing_and_is_a_store_error(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a")], 0)
    await store.redis.set(cmds_key(game), "not a hash")  # the script's first call now fails
    with pytest.raises(StoreError, match="WRONGTYPE") as refused:
        await append(store, game, [ev("b"), ev("c")], 1, command_id="c1")
    assert not isinstance(refused.value, (ConflictError, StoreUnavailable))
    assert [e.type for e in await store.read(game)] == ["a"]


async def test_empty_batch_and_bad_arguments_are_refused_before_sending(store, new_game_id) -> None:
    game = new_game_id()
    with pytest.raises(ValueError, match="at least one event"):
        await append(store, game, [], 0)
    with pytest.raises(ValueError, match="expected_version must be an int >= 0"):
        await append(store, game, [ev("a")], -1)
    with pytest.raises(ValueError, match="game id must be a non-empty str without braces"):
        await append(store, "bad{id}", [ev("a")], 0)
    assert await store.version(game) == 0


async def test_racing_appends_on_one_version_have_exactly_one_winner(store, new_game_id) -> None:
    game = new_game_id()
    for version in range(5):
        results = await asyncio.gather(
            *(append(store, game, [ev("move", by=i), ev("moved", by=i)], version * 2, command_id=f"v{version}-{i}")
              for i in range(12)),
            return_exceptions=True,
        )
        winners = [r for r in results if isinstance(r, AppendResult)]
        losers = [r for r in results if isinstance(r, ConflictError)]
        assert winners == [AppendResult(version * 2 + 1, version * 2 + 2, False)]
        assert len(losers) == 11 and {r.actual for r in losers} == {version * 2 + 2}
    assert [e.version for e in await store.read(game)] == list(range(1, 11))


async def test_many_tasks_retrying_on_conflict_leave_a_gapless_stream_of_whole_batches(store, new_game_id) -> None:
    game = new_game_id()
    tasks, per_task = 16, 6
    rng = LegacyRandom(7)
    sizes = {(t, k): rng.randint(1, 3) for t in range(tasks) for k in range(per_task)}
    conflicts = 0

    async def writer(t: int) -> None:
        nonlocal conflicts
        for k in range(per_task):
            batch = [ev("step", task=t, k=k, part=p) for p in range(sizes[t, k])]
            while True:
                version = await store.version(game)
                try:
                    await append(store, game, batch, version, command_id=f"{t}.{k}", actor=t % 4)
                    break
                except ConflictError:
                    conflicts += 1

    await asyncio.gather(*(writer(t) for t in range(tasks)))
    events = await store.read(game)
    assert [e.version for e in events] == list(range(1, sum(sizes.values()) + 1))
    # Each command's events are contiguous and complete: no batch was split or interleaved.
    runs: list[tuple[str, list[int]]] = []
    for e in events:
        if runs and runs[-1][0] == e.command_id:
            runs[-1][1].append(e.payload["part"])
        else:
            runs.append((e.command_id, [e.payload["part"]]))
    assert sorted(cid for cid, _ in runs) == sorted(f"{t}.{k}" for t in range(tasks) for k in range(per_task))
    for cid, parts in runs:
        t, k = map(int, cid.split("."))
        assert parts == list(range(sizes[t, k]))
    assert conflicts > 0  # the race really happened
    await store.verify_chain(game)


# --- idempotency ----------------------------------------------------------------------------


async def test_duplicate_command_id_returns_the_earlier_result_and_appends_nothing(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a")], 0, command_id="c0")
    first = await append(store, game, [ev("b"), ev("c")], 1, command_id="c1")
    again = await append(store, game, [ev("b"), ev("c")], 1, command_id="c1")
    assert (first, again) == (AppendResult(2, 3, False), AppendResult(2, 3, True))
    await append(store, game, [ev("d")], 3, command_id="c2")
    # Stale expected version and different events: still the earlier result, still nothing new.
    stale = await append(store, game, [ev("zzz")], 0, command_id="c1")
    assert stale == AppendResult(2, 3, True)
    assert [e.type for e in await store.read(game)] == ["a", "b", "c", "d"]


async def test_command_result_looks_up_an_applied_command_without_appending(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a")], 0, command_id="c0")
    await append(store, game, [ev("b"), ev("c")], 1, command_id="c1")
    assert await store.command_result(game, "c1") == AppendResult(2, 3, True)
    assert await store.command_result(game, "never") is None
    assert await store.version(game) == 3


async def test_command_ids_are_per_game(store, new_game_id) -> None:
    one, two = new_game_id(), new_game_id()
    await append(store, one, [ev("a"), ev("b")], 0, command_id="same")
    assert await append(store, two, [ev("x")], 0, command_id="same") == AppendResult(1, 1, False)


async def test_concurrent_retries_of_one_command_apply_it_once(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a")], 0)
    results = await asyncio.gather(*(append(store, game, [ev("b"), ev("c")], 1, command_id="retry") for _ in range(10)))
    assert sorted(results, key=lambda r: r.duplicate) == [AppendResult(2, 3, False)] + [AppendResult(2, 3, True)] * 9
    assert await store.version(game) == 3


# --- subscriptions and read_many ------------------------------------------------------------


async def collect(store: EventStore, game: str, from_version: int, until_version: int) -> list[int]:
    seen: list[int] = []
    async for envelope in store.subscribe(game, from_version, block_ms=200):
        seen.append(envelope.version)
        if envelope.version >= until_version:
            break
    return seen


async def test_subscription_replays_history_then_follows_without_skips_or_repeats(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("h", i=i) for i in range(5)], 0)

    async def writer() -> None:
        version = 5
        for i in range(40):
            size = 1 + i % 3
            await append(store, game, [ev("live", i=i)] * size, version)
            version += size
            if i % 7 == 0:
                await asyncio.sleep(0.01)

    total = 5 + sum(1 + i % 3 for i in range(40))
    subscribers = [asyncio.create_task(collect(store, game, start, total)) for start in (1, 3, 6)]
    await asyncio.wait_for(asyncio.gather(writer(), *subscribers), 20)
    assert [s.result() for s in subscribers] == [list(range(start, total + 1)) for start in (1, 3, 6)]


async def test_subscription_from_a_future_version_waits_for_it(store, new_game_id) -> None:
    game = new_game_id()
    waiting = asyncio.create_task(collect(store, game, 3, 4))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    await append(store, game, [ev("a"), ev("b"), ev("c"), ev("d")], 0)
    assert await asyncio.wait_for(waiting, 5) == [3, 4]


async def test_subscription_yields_full_envelopes(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a", k=1)], 0, command_id="x", actor=2)
    async with asyncio.timeout(10):
        envelope = await anext(store.subscribe(game))
    assert envelope == (await store.read(game))[0]
    assert (envelope.version, envelope.command_id, envelope.actor, envelope.payload) == (1, "x", 2, {"k": 1})


async def test_read_many_returns_only_games_with_events_after_each_position(store, new_game_id) -> None:
    a, b, c = new_game_id(), new_game_id(), new_game_id()
    await append(store, a, [ev("a1"), ev("a2"), ev("a3")], 0)
    await append(store, b, [ev("b1")], 0)
    got = await store.read_many({a: 1, b: 1, c: 0})
    assert {game: [(e.version, e.type) for e in events] for game, events in got.items()} == {a: [(2, "a2"), (3, "a3")]}
    capped = await store.read_many({a: 0, b: 0}, count=2)
    assert {game: [e.version for e in events] for game, events in capped.items()} == {a: [1, 2], b: [1]}
    assert await store.read_many({}) == {}
    assert await store.read_many({b: 1}) == {}


async def test_read_many_blocks_until_an_event_arrives_on_any_game(store, new_game_id) -> None:
    a, b = new_game_id(), new_game_id()
    await append(store, a, [ev("a1")], 0)

    async def later() -> None:
        await asyncio.sleep(0.1)
        await append(store, b, [ev("b1"), ev("b2")], 0)

    writer = asyncio.create_task(later())
    got = await store.read_many({a: 1, b: 0}, block_ms=5000)
    await writer
    assert {game: [e.type for e in events] for game, events in got.items()} == {b: ["b1", "b2"]}


async def test_read_many_with_a_short_block_returns_empty_when_nothing_comes(store, new_game_id) -> None:
    a = new_game_id()
    assert await store.read_many({a: 0}, block_ms=50) == {}


# --- hash chain -----------------------------------------------------------------------------


async def test_verify_chain_passes_and_returns_the_last_hash(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a"), ev("b")], 0)
    await append(store, game, [ev("c", nested={"l": [1, None, True]})], 2)
    assert await store.verify_chain(game) == (await store.read(game))[-1].hash
    assert await store.verify_chain(new_game_id()) == GENESIS_HASH


async def test_exported_log_verifies_without_the_store(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a", x=1), ev("b", y=[1, 2])], 0, command={"type": "go", "args": {}})
    export = codec.dump_log(await store.read(game, upcast=False))
    assert verify_envelopes(codec.load_log(export)) == await store.verify_chain(game)


async def test_forged_event_added_with_a_raw_xadd_is_detected(store, new_game_id) -> None:
    game = new_game_id()
    await append(store, game, [ev("a"), ev("b"), ev("c")], 0)
    _, last_hash = await store.head(game)
    forged = codec.encode_new(game, 4, ev("won", seat=1), command_id=None, actor=None, ts=TS, command=None)
    await store.redis.xadd(events_key(game), {"b": forged, "p": last_hash, "h": "0" * 40}, id="4-0")
    with pytest.raises(ChainBroken) as broken:
        await store.verify_chain(game)
    assert (broken.value.game_id, broken.value.version) == (game, 4)
    assert broken.value.reason == "hash does not match the event's bytes"


async def test_edited_copy_of_a_stream_is_detected_at_the_edited_event(store, new_game_id) -> None:
    game, copy = new_game_id(), new_game_id()
    await append(store, game, [ev("a", n=1), ev("b", n=2), ev("c", n=3)], 0)
    entries = await store.redis.xrange(events_key(game))
    for entry_id, fields in entries:
        fields = dict(fields)
        body = msgpack.unpackb(fields[b"b"])
        body["game_id"] = copy
        if body["version"] == 2:
            body["payload"] = {"n": 200}
        fields[b"b"] = msgpack.packb(body)
        if body["version"] == 1:  # re-link the first event honestly: only version 2 is forged
            fields[b"h"] = link_hash(GENESIS_HASH, fields[b"b"]).encode()
        await store.redis.xadd(events_key(copy), fields, id=entry_id)
    with pytest.raises(ChainBroken) as broken:
        await store.verify_chain(copy)
    assert broken.value.version == 2


async def test_appending_after_a_forged_entry_keeps_linking_to_it(store, new_game_id) -> None:
    # The script links to whatever the last entry says; the forgery stays visible at its version.
    game = new_game_id()
    await append(store, game, [ev("a")], 0)
    await store.redis.xadd(events_key(game), {"b": b"junk", "p": "x", "h": "y" * 40}, id="2-0")
    assert await append(store, game, [ev("c")], 2) == AppendResult(3, 3, False)
    with pytest.raises(ChainBroken) as broken:
        await store.verify_chain(game)
    assert broken.value.version == 2


# --- metadata and lobby ---------------------------------------------------------------------


async def test_game_metadata_round_trips_with_types(store, new_game_id) -> None:
    game = new_game_id()
    meta = {"game": "castle", "seats": [{"seat": 0, "token": "ab"}], "created": TS, "seed": b"\x01\x02", "open": True}
    await store.create_game(game, meta)
    assert await store.get_meta(game) == meta
    await store.update_meta(game, {"open": False, "winner": None})
    assert await store.get_meta(game) == {**meta, "open": False, "winner": None}


async def test_creating_an_existing_game_raises_game_exists(store, new_game_id) -> None:
    game, used = new_game_id(), new_game_id()
    await store.create_game(game, {"game": "castle"})
    with pytest.raises(GameExists, match=f"game '{game}' already exists"):
        await store.create_game(game, {"game": "carcassonne"})
    assert await store.get_meta(game) == {"game": "castle"}
    await append(store, used, [ev("a")], 0)
    with pytest.raises(GameExists):
        await store.create_game(used, {"game": "castle"})


async def test_updating_metadata_of_an_unknown_game_raises(store, new_game_id) -> None:
    game = new_game_id()
    with pytest.raises(UnknownGame):
        await store.update_meta(game, {"status": "open"})
    assert await store.get_meta(game) is None


async def test_lobby_lists_games_by_status_newest_first_and_moves_them(store, new_game_id) -> None:
    open_, playing = f"open-{uuid.uuid4().hex[:8]}", f"playing-{uuid.uuid4().hex[:8]}"
    games = [new_game_id() for _ in range(4)]
    try:
        for score, game in enumerate(games):
            await store.create_game(game, {"game": "castle"})
            await store.set_status(game, open_, score)
        assert await store.list_games(open_) == games[::-1]
        assert await store.list_games(open_, limit=2, offset=1) == [games[2], games[1]]
        assert await store.list_games(open_, newest_first=False, limit=2) == games[:2]
        await store.set_status(games[1], playing, 1)
        assert await store.list_games(open_) == [games[3], games[2], games[0]]
        assert await store.list_games(playing) == [games[1]]
        assert (await store.count_games(open_), await store.count_games(playing)) == (3, 1)
        assert (await store.get_meta(games[1]))["status"] == playing
    finally:
        for key in lobby_keys(open_) + lobby_keys(playing):
            await store.redis.delete(key)
