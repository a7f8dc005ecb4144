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
from typing import Any

from events import codec
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
    run = uuid.uuid4().hex[:12]
    games = [f"bench-{run}-{i}" for i in range(concurrency)]
    raw_keys = [f"bench:{{{run}-{i}}}:xadd" for i in range(concurrency)]
    versions = dict.fromkeys(games, 0)
    event = NewEvent("tile_placed", _PAYLOAD)
    body = codec.encode_new(games[0], 1, event, command_id="bench", actor=0, ts=0, command=None)
    try:
        info = await store.redis.info("server")
        server_version = info.get("valkey_version") or info.get("redis_version")

        async def appends(game_id: str, count: int) -> None:
            for _ in range(count):
                version = versions[game_id]
                await store.append(
                    game_id, [event], expected_version=version, command_id=uuid.uuid4().hex,
                    actor=version % 2, ts=time.time_ns() // 1_000_000,
                )
                versions[game_id] = version + 1

        async def xadds(key: str, count: int) -> None:
            for _ in range(count):
                await store.redis.xadd(key, {"b": body})

        async def timed(make: Any, targets: list[str], total: int) -> float:
            shares = [total // concurrency + (1 if i < total % concurrency else 0) for i in range(concurrency)]
            start = time.perf_counter()
            await asyncio.gather(*(make(t, s) for t, s in zip(targets, shares) if s))
            return time.perf_counter() - start

        await timed(appends, games, min(50, n))  # warm-up: connections, script cache
        await timed(xadds, raw_keys, min(50, n))
        warm = store.append_batches
        append_s = xadd_s = 0.0
        per_round = [n // _ROUNDS + (1 if i < n % _ROUNDS else 0) for i in range(_ROUNDS)]
        for i, count in enumerate(per_round):
            if not count:
                continue
            if i % 2 == 0:
                append_s += await timed(appends, games, count)
                xadd_s += await timed(xadds, raw_keys, count)
            else:
                xadd_s += await timed(xadds, raw_keys, count)
                append_s += await timed(appends, games, count)
        batches = store.append_batches
        per_batch = None
        if batches is not None and warm is not None:
            per_batch = round((batches.calls - warm.calls) / (batches.batches - warm.batches), 2)
        append_rate = n / append_s
        xadd_rate = n / xadd_s
        return {
            "n": n,
            "concurrency": concurrency,
            "append_per_s": round(append_rate, 1),
            "xadd_per_s": round(xadd_rate, 1),
            "ratio": round(append_rate / xadd_rate, 3),
            "append_mean_us": round(append_s / n * concurrency * 1e6, 1),
            "xadd_mean_us": round(xadd_s / n * concurrency * 1e6, 1),
            "body_bytes": len(body),
            "server_version": server_version,
            "appends_per_batch": per_batch,
        }
    finally:
        for key in raw_keys + [k for g in games for k in (events_key(g), meta_key(g), cmds_key(g))]:
            with contextlib.suppress(Exception):  # cleanup is best effort; the numbers are what matter
                await store.redis.delete(key)
        await store.close()
