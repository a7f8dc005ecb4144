"""How fast the store appends, next to a raw XADD on the same server in the same run.

``donjon bench`` calls :func:`append_vs_xadd`. Both sides send the same encoded event body, one
round trip per event, from ``concurrency`` tasks (each on its own game, since appends to one game
serialize on its version), and both run in alternating rounds so that neither gets a warmer
server. The ratio ``append_per_s / xadd_per_s`` is the cost of the Lua script (command id check,
expected-version check, hash chain, idempotency record) over a bare stream write. With several
tasks, the appends made in one loop turn go as one pipeline (:mod:`events.batcher`) unless
``batch_appends=False``; the XADDs are always sent one by one, as a plain client would.

>>> asyncio.run(append_vs_xadd("redis://127.0.0.1:6379/0", 2000))   # doctest: +SKIP
{'n': 2000, 'concurrency': 1, 'append_per_s': 9100.0, 'xadd_per_s': 15800.0, 'ratio': 0.58, ...}
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from events import codec
from events.batcher import BatchStats
from events.envelope import NewEvent
from events.store import EventStore, cmds_key, events_key, meta_key

__all__ = ["append_vs_xadd"]

_ROUNDS = 4
_PAYLOAD = {"tile": "CRFRf", "x": 3, "y": -2, "rotation": 90, "meeple": {"seat": 1, "feature": "city", "at": 2}}


async def append_vs_xadd(url: str, n: int, *, concurrency: int = 1, batch_appends: bool = True) -> dict[str, Any]:
    """Append ``n`` single-event batches and XADD ``n`` raw entries; rates and their ratio.

    Returns ``n``, ``concurrency``, ``append_per_s``, ``xadd_per_s``, ``ratio`` (append / xadd),
    ``append_mean_us``, ``xadd_mean_us`` (per operation, per task), ``body_bytes``, the
    server's ``server_version`` and ``appends_per_batch`` (mean; ``None`` with
    ``batch_appends=False``). Uses fresh keys and deletes them afterwards.
    """
    if n < 1 or concurrency < 1:
        raise ValueError("n and concurrency must be >= 1")
    store = await EventStore.connect(
        url, max_connections=max(8, concurrency * 2), batch_appends=batch_appends, cluster=None
    )
    race = _Race(store, uuid.uuid4().hex[:12], concurrency)
    try:
        info = await store.redis.info("server")
        await race.timed(race.appends, race.games, min(50, n))  # warm-up: connections, script cache
        await race.timed(race.xadds, race.raw_keys, min(50, n))
        warm = store.append_batches
        append_s, xadd_s = await race.rounds(n)
        return {
            "n": n,
            "concurrency": concurrency,
            **_rates(n, concurrency, append_s, xadd_s),
            "body_bytes": len(race.body),
            "server_version": info.get("valkey_version") or info.get("redis_version"),
            "appends_per_batch": _appends_per_batch(warm, store.append_batches),
        }
    finally:
        await race.clean_up()
        await store.close()


def _shares(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` counts as even as can be, the larger first."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


class _Race:
    """Both sides of the race on fresh keys of run ``run``: ``concurrency`` games to append to,
    as many raw streams to XADD to, and the one encoded event body both send."""

    def __init__(self, store: EventStore, run: str, concurrency: int) -> None:
        self.store = store
        self.concurrency = concurrency
        self.games = [f"bench-{run}-{i}" for i in range(concurrency)]
        self.raw_keys = [f"bench:{{{run}-{i}}}:xadd" for i in range(concurrency)]
        self.versions = dict.fromkeys(self.games, 0)
        self.event = NewEvent("tile_placed", _PAYLOAD)
        self.body = codec.encode_new(self.games[0], 1, self.event, command_id="bench", actor=0, ts=0, command=None)

    async def appends(self, game_id: str, count: int) -> None:
        for _ in range(count):
            version = self.versions[game_id]
            await self.store.append(
                game_id, [self.event], expected_version=version, command_id=uuid.uuid4().hex,
                actor=version % 2, ts=time.time_ns() // 1_000_000,
            )
            self.versions[game_id] = version + 1

    async def xadds(self, key: str, count: int) -> None:
        for _ in range(count):
            await self.store.redis.xadd(key, {"b": self.body})

    async def timed(self, make: Callable[[str, int], Awaitable[None]], targets: list[str], total: int) -> float:
        """Seconds for ``total`` operations of ``make`` shared out over ``targets``, one task each."""
        shares = _shares(total, self.concurrency)
        start = time.perf_counter()
        await asyncio.gather(*(make(t, s) for t, s in zip(targets, shares) if s))
        return time.perf_counter() - start

    async def rounds(self, n: int) -> tuple[float, float]:
        """(append seconds, XADD seconds) for ``n`` of each over :data:`_ROUNDS` rounds, the side
        that goes first alternating, so that neither always meets a warmer server."""
        append_s = xadd_s = 0.0
        for i, count in enumerate(_shares(n, _ROUNDS)):
            if not count:
                continue
            if i % 2 == 0:
                append_s += await self.timed(self.appends, self.games, count)
                xadd_s += await self.timed(self.xadds, self.raw_keys, count)
            else:
                xadd_s += await self.timed(self.xadds, self.raw_keys, count)
                append_s += await self.timed(self.appends, self.games, count)
        return append_s, xadd_s

    async def clean_up(self) -> None:
        keys = self.raw_keys + [k for g in self.games for k in (events_key(g), meta_key(g), cmds_key(g))]
        for key in keys:
            with contextlib.suppress(Exception):  # cleanup is best effort; the numbers are what matter
                await self.store.redis.delete(key)


def _rates(n: int, concurrency: int, append_s: float, xadd_s: float) -> dict[str, float]:
    append_rate = n / append_s
    xadd_rate = n / xadd_s
    return {
        "append_per_s": round(append_rate, 1),
        "xadd_per_s": round(xadd_rate, 1),
        "ratio": round(append_rate / xadd_rate, 3),
        "append_mean_us": round(append_s / n * concurrency * 1e6, 1),
        "xadd_mean_us": round(xadd_s / n * concurrency * 1e6, 1),
    }


def _appends_per_batch(warm: BatchStats | None, batches: BatchStats | None) -> float | None:
    """Mean appends per pipelined batch since ``warm`` (the batcher's counts after the warm-up);
    ``None`` when the store does not batch."""
    if batches is None or warm is None:
        return None
    return round((batches.calls - warm.calls) / (batches.batches - warm.batches), 2)
