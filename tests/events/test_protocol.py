"""The store's seams: the Redis store satisfies the protocols the service is written against
(at run time, and with the same signatures), the protocol names what the service calls, and
nothing outside ``events/store/`` reaches into a store's private members."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import msgpack
import pytest

from events.deadlines import Deadlines
from events.due import DueBots
from events.envelope import NewEvent
from events.feed import GameFeed
from events.keys import cmds_key, events_key, live_channel
from events.protocol import DeadlineIndex, DueBotsIndex, Feed, Store
from events.store import EventStore

ROOT = Path(__file__).resolve().parents[2]
USERS = ("service", "projections", "bench")
"""Where the store is used through :class:`Store`."""


@pytest.fixture
async def redis_store(embedded_redis_url: str) -> AsyncIterator[EventStore]:
    store = await EventStore.connect(embedded_redis_url)
    try:
        yield store
    finally:
        await store.close()


async def test_the_redis_store_and_its_indexes_satisfy_the_protocols(redis_store: EventStore) -> None:
    store: Store = redis_store  # and mypy checks the assignment, signatures included
    assert isinstance(store, Store)
    assert isinstance(store.due_bots, DueBotsIndex)
    assert isinstance(store.deadlines, DeadlineIndex)
    feed = store.feed()
    try:
        assert isinstance(feed, Feed)
    finally:
        await feed.close()


def _members(protocol: type) -> list[str]:
    return [name for name in protocol.__dict__ if not name.startswith("_")]


@pytest.mark.parametrize(
    ("protocol", "implementation"),
    [(Store, EventStore), (DueBotsIndex, DueBots), (DeadlineIndex, Deadlines), (Feed, GameFeed)],
)
def test_every_protocol_method_has_the_implementations_signature(protocol: type, implementation: type) -> None:
    for name in _members(protocol):
        wanted, got = getattr(protocol, name), getattr(implementation, name)
        if isinstance(wanted, property):
            assert isinstance(got, property), name
            continue
        assert inspect.iscoroutinefunction(got) == inspect.iscoroutinefunction(wanted), name
        # The parameters alike (names, kinds, defaults, types); a return type may be narrower.
        assert list(map(str, inspect.signature(got).parameters.values())) == list(
            map(str, inspect.signature(wanted).parameters.values())
        ), name


def _sources(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def test_the_store_protocol_names_only_what_the_service_calls() -> None:
    """Every member of :class:`Store` is used by the service, the projections or the bench (so a
    new backend writes nothing that nobody calls)."""
    used = {
        node.attr
        for path in [*_sources(*USERS), ROOT / "events" / "deadlines.py"]  # the clocks' calls
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
    }
    unused = [name for name in _members(Store) if name not in used]
    assert not unused, f"Store protocol members nobody uses: {unused}"


_STORE_LIKE = re.compile(r"(^|\.)_?(event_)?store$|\[STORE\]$")


def _private_store_accesses(source: str, where: str) -> list[str]:
    """Every ``<a store>._name`` in ``source``: the value's text ends in ``store`` (``store``,
    ``self.store``, ``self._store``, ``event_store``) or is ``app[STORE]``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
            continue
        if _STORE_LIKE.search(ast.unparse(node.value)):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_nothing_outside_the_store_touches_a_private_member_of_a_store() -> None:
    store_package = ROOT / "events" / "store"
    paths = [p for p in _sources("events", *USERS, "tests") if store_package not in p.parents]
    found = [
        line
        for path in paths
        for line in _private_store_accesses(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not found, "private store members used outside events/store:\n" + "\n".join(found)


def test_the_check_sees_a_private_access() -> None:
    sample = "async def f(store, self, app):\n    store._call()\n    self._store.redis\n    self.store._x\n    app[STORE]._y\n"
    found = {line.split(": ")[1] for line in _private_store_accesses(sample, "sample")}
    assert found == {"store._call", "self.store._x", "app[STORE]._y"}


async def test_the_feeds_hooks_are_given_at_construction_and_called(redis_store: EventStore) -> None:
    """``store.feed(on_notice=...)``: the hook the node counts notices with is called per append notice."""
    game_id = f"hooks-{uuid.uuid4().hex[:12]}"
    heard: list[str] = []
    feed = redis_store.feed(on_notice=lambda: heard.append("notice"), on_reconnect=lambda: heard.append("lost"))
    try:
        feed.watch([game_id])
        await feed.next(5.0)  # the subscription's confirmation
        await redis_store.append(game_id, [NewEvent("a", {})], expected_version=0, command_id=None, actor=None, ts=1)
        for _ in range(100):
            if heard:
                break
            await asyncio.sleep(0.05)
        assert heard == ["notice"]
    finally:
        await feed.close()
        for key in (events_key(game_id), cmds_key(game_id)):
            await redis_store.redis.delete(key)


async def test_a_notice_that_ends_at_what_the_watcher_has_shown_is_neither_decoded_nor_announced(
    redis_store: EventStore,
) -> None:
    """``store.feed(shown=...)``: the node's own append, pushed as it landed, comes back as a
    notice ending at the hash it has shown; that notice is dropped unread, any other is carried."""
    game_id = f"shown-{uuid.uuid4().hex[:12]}"
    await redis_store.append(game_id, [NewEvent("a", {"n": 1})], expected_version=0, command_id=None, actor=None, ts=1)
    [(_, body, prev, head)] = await redis_store.raw_entries(game_id)
    notice = msgpack.packb([[body, prev.encode(), head.encode()]], use_bin_type=True)
    shown = {game_id: head}
    feed = redis_store.feed(shown=shown.get)
    try:
        feed.watch([game_id])
        for _ in range(100):  # announced when watched, then on the subscription's confirmation
            if feed.subscribed_on(game_id) is not None and await feed.next(0.05) is None:
                break
            await feed.next(0.05)
        await redis_store.redis.spublish(live_channel(game_id), notice)
        assert await feed.next(0.5) is None
        shown[game_id] = ""  # unknown: carried as before
        await redis_store.redis.spublish(live_channel(game_id), notice)
        due = await feed.next(5.0)
        assert due is not None and [(e.version, e.hash) for e in due[game_id]] == [(1, head)]
        # Decoded only when handed over: shown meanwhile (the node's own append, pushed once its
        # answer came after its notice), the notice is dropped all the same.
        received = feed.notices
        await redis_store.redis.spublish(live_channel(game_id), notice)
        for _ in range(200):
            if feed.notices > received:
                break
            await asyncio.sleep(0.01)
        shown[game_id] = head
        assert await feed.next(0.3) is None
    finally:
        await feed.close()
        for key in (events_key(game_id), cmds_key(game_id)):
            await redis_store.redis.delete(key)


def test_decode_notice_names_a_shown_notice_and_still_refuses_a_malformed_one(redis_store: EventStore) -> None:
    shown = "ab" * 32
    ends_there = msgpack.packb([[b"x", b"0" * 64, shown.encode()]], use_bin_type=True)
    assert redis_store.decode_notice("g", ends_there, shown) is None
    assert redis_store.notice_ends_at(ends_there, shown) and not redis_store.notice_ends_at(ends_there, "cd" * 32)
    assert not redis_store.notice_ends_at(msgpack.packb(7), shown) and not redis_store.notice_ends_at(b"\xc1", shown)
    assert redis_store.decode_notice("g", msgpack.packb([[b"x"]]), shown) == []  # no hash: malformed, not shown
    assert redis_store.decode_notice("g", msgpack.packb(7), shown) == []  # a version only: read the stream
