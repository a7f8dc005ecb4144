"""What replica-acknowledged appends cost: the same appends at ``local`` and at ``replica``
durability, on one throwaway master with its replica (both fsync always, as production runs),
in alternating rounds so that neither side gets a warmer server.

``donjon bench --only durability`` prints the mean and p99 ack latency of each and their ratio,
for one writer (every append waits alone) and 16 (appends of one loop turn share one ``WAIT``).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid

from events.envelope import NewEvent
from events.localcluster import LocalReplicaPair
from events.store import EventStore

__all__ = ["durability_figures", "ack_latencies"]

_ROUNDS = 4


async def ack_latencies(store: EventStore, n: int, writers: int) -> list[float]:
    """Seconds from each append's call to its ack, ``n`` in all over ``writers`` concurrent games."""
    latencies: list[float] = []

    async def write(game_id: str, count: int) -> None:
        version = 0
        for _ in range(count):
            started = time.perf_counter()
            result = await store.append(
                game_id, [NewEvent("e", {"n": version})], expected_version=version,
                command_id=uuid.uuid4().hex, actor=None, ts=0,
            )
            latencies.append(time.perf_counter() - started)
            version = result.last_version

    run = uuid.uuid4().hex[:8]
    await asyncio.gather(*(write(f"bench-{run}-{i}", n // writers) for i in range(writers)))
    return latencies


def _summary(latencies: list[float]) -> tuple[float, float]:
    ordered = sorted(latencies)
    return sum(ordered) / len(ordered) * 1e6, ordered[int(len(ordered) * 0.99) - 1] * 1e6


async def durability_figures(quick: bool) -> dict[str, str]:
    n = 400 if quick else 2000
    figures: dict[str, str] = {}
    with (
        tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder,
        LocalReplicaPair(folder, fsync="always") as pair,
    ):
        stores = {
            level: await EventStore.connect(pair.url, durability=level)
            for level in ("local", "replica")
        }
        try:
            for writers in (1, 16):
                seen: dict[str, list[float]] = {"local": [], "replica": []}
                for _ in range(_ROUNDS):
                    for level, store in stores.items():
                        seen[level] += await ack_latencies(store, n // _ROUNDS, writers)
                local_mean, local_p99 = _summary(seen["local"])
                replica_mean, replica_p99 = _summary(seen["replica"])
                figures[f"durability: ack µs mean / p99, local vs replica ({writers} writer(s))"] = (
                    f"{local_mean:,.0f} / {local_p99:,.0f} vs {replica_mean:,.0f} / {replica_p99:,.0f}"
                    f" = {replica_mean / local_mean:.2f}x mean"
                )
        finally:
            for store in stores.values():
                await store.close()
    return figures
