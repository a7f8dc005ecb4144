"""``donjon bench --only memory``: a node's resident memory after it loaded many finished games.

A few bot-only games of every engine are played to the end on an embedded server, then copied
server-side (``DUMP``/``RESTORE`` of the stream, the meta copied field by field) to ``games``
ids. A fresh Python process then loads each of them through ``GameService.load``, as requests
and sockets would, and reports its RSS before and after (``/proc/self/statm``): once with the
cache bounded by the defaults (``DONJON_CACHE_GAMES``, ``DONJON_CACHE_BYTES``), once with no
bound worth the name, which is what a node did before the bounds. Each run is a child process,
so nothing of the bench's own memory counts, and it stops after its ``games`` loads.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

__all__ = ["memory_figures"]

TEMPLATES_EACH = 2
_ID = "bench-mem-{:05d}"


def rss_bytes() -> int:
    """This process's resident set size now (Linux), else its peak (``ru_maxrss``)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def memory_figures(engines: Mapping[str, Any], quick: bool = False, games: int | None = None) -> dict[str, str]:
    """RSS of a fresh node after loading ``games`` finished games (10,000; 1,000 with ``quick``),
    with the default cache bounds and unbounded."""
    from events.embedded import EmbeddedServer
    from service.play.cache import CACHE_BYTES, CACHE_GAMES

    count = games if games is not None else (1_000 if quick else 10_000)
    figures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with EmbeddedServer(folder, fsync="everysec") as server:
            templates = await _templates(server.url, engines)
            await _copies(server.url, templates, count)
            runs = {"default bounds": (CACHE_GAMES, CACHE_BYTES), "unbounded (as before)": (count + 1, 1 << 62)}
            for label, (max_games, max_bytes) in runs.items():
                result = await asyncio.to_thread(_measure_in_child, server.url, count, max_games, max_bytes)
                figures[f"memory: RSS after loading {count:,} finished games, cache {label}"] = (
                    f"{result['after'] / 2**20:,.0f} MiB (fresh process {result['before'] / 2**20:,.0f} MiB; "
                    f"{result['cached']:,} games cached, {result['cache_bytes'] / 2**20:,.0f} MiB estimated; "
                    f"{(result['after'] - result['before']) / count / 1024:,.1f} KiB per game loaded)"
                )
    return figures


async def _templates(url: str, engines: Mapping[str, Any]) -> list[str]:
    """Bot-only games of every engine with bots, played to the end; their ids."""
    from events.store import EventStore
    from service.play.game_service import GameService

    store = await EventStore.connect(url)
    service = GameService(store, engines)
    ids: list[str] = []
    try:
        for name in sorted(engines):
            engine = engines[name]
            bots = service.bot_names(name)
            if not bots:
                continue
            seats = min(max(2, engine.min_seats), engine.max_seats)
            for _ in range(TEMPLATES_EACH):
                bot = "random" if "random" in bots else bots[0]
                projection = await service.create_game(name, {}, seats, {str(s): bot for s in range(seats)}, True)
                ids.append(projection.game_id)
        for _ in range(60_000):  # bot games end; ten minutes is far more than they take
            if all((p := service.cached(g)) is not None and p.status.value == "finished" for g in ids):
                break
            await asyncio.sleep(0.01)
        else:
            raise RuntimeError("the template games did not finish")
    finally:
        await service.close()
        await store.close()
    return ids


async def _copies(url: str, templates: list[str], count: int) -> None:
    """``count`` copies of the templates, made by the server (a stream's entries do not name
    the key they live under, and folding does not look at the game id inside an envelope)."""
    from events.store import EventStore, events_key, meta_key

    store = await EventStore.connect(url)
    redis = store.redis
    try:
        dumps: list[tuple[bytes, Any]] = []
        for template in templates:
            stream = await redis.dump(events_key(template))
            assert stream is not None, f"template {template!r} has no stream"
            dumps.append((stream, await redis.hgetall(meta_key(template))))
        for start in range(0, count, 500):
            async with redis.pipeline(transaction=False) as pipe:
                for index in range(start, min(count, start + 500)):
                    stream, meta = dumps[index % len(dumps)]
                    game_id = _ID.format(index)
                    pipe.restore(events_key(game_id), 0, stream, replace=True)
                    pipe.hset(meta_key(game_id), mapping=meta)
                await pipe.execute()
    finally:
        await store.close()


def _measure_in_child(url: str, count: int, max_games: int, max_bytes: int) -> dict[str, int]:
    argv = [sys.executable, "-m", "bench.memory", url, str(count), str(max_games), str(max_bytes)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800, check=True)
    result: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


async def _load_all(url: str, count: int, max_games: int, max_bytes: int) -> dict[str, int]:
    """In the child: load every copy through the service; RSS before and after."""
    import games
    from events.store import EventStore
    from service.play.game_service import GameService

    store = await EventStore.connect(url)
    service = GameService(store, games.default_engines(), cache_games=max_games, cache_bytes=max_bytes)
    gc.collect()
    before = rss_bytes()
    try:
        for index in range(count):
            await service.load(_ID.format(index))
        gc.collect()
        after = rss_bytes()
        return {"before": before, "after": after, "cached": len(service.cache), "cache_bytes": service.cache.bytes}
    finally:
        await service.close()
        await store.close()


if __name__ == "__main__":
    from service.ops.logs import configure_logging

    configure_logging("json", "warning", stream=open(os.devnull, "w"))  # noqa: SIM115 - lives as long as the run
    url, count, max_games, max_bytes = sys.argv[1], *(int(arg) for arg in sys.argv[2:5])
    print(json.dumps(asyncio.run(_load_all(url, count, max_games, max_bytes))))
