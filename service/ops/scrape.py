"""One scrape, one server: ``/metrics`` of a ``donjon serve`` with several workers shows them all.

The kernel hands each connection to whichever worker it picks, so a scrape answered by one worker
alone would show a different part of the server each time (counters would seem to reset). Each
worker therefore also listens on a unix socket of its own in a folder the supervisor makes
(:class:`WorkerPlace`); the worker that answers ``/metrics`` asks every other one for its own
series (``/metrics?scope=worker``) and merges them with its own into one exposition, every sample
labelled with its ``worker`` (each worker's series also carry their own ``node``). A sum over
``worker`` is the whole server; a worker that does not answer within :data:`ASK_TIMEOUT` (one
being replaced) is left out, and ``donjon_scrape_workers`` says how many answered.

>>> one = b'# HELP x_total X.\\n# TYPE x_total counter\\nx_total{node="n-0"} 2.0\\n'
>>> two = b'# HELP x_total X.\\n# TYPE x_total counter\\nx_total{node="n-1"} 3.0\\n'
>>> print(merge({0: one, 1: two}, expected=2).decode())  # doctest: +NORMALIZE_WHITESPACE
# HELP x_total X.
# TYPE x_total counter
x_total{node="n-0",worker="0"} 2.0
x_total{node="n-1",worker="1"} 3.0
# HELP donjon_scrape_workers Workers whose series this scrape holds, of the server's workers.
# TYPE donjon_scrape_workers gauge
donjon_scrape_workers{of="2"} 2.0
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

__all__ = ["ASK_TIMEOUT", "WorkerPlace", "gather", "merge"]

ASK_TIMEOUT = 1.0
"""Seconds one worker waits for another's series."""


@dataclass(frozen=True)
class WorkerPlace:
    """Where a worker stands among the server's workers, and where their sockets are."""

    index: int
    count: int
    sockets: Path
    """The folder of the workers' unix sockets (``worker-<index>.sock``), made by the supervisor."""
    routed: bool = False
    """Whether a router hands this worker its connections (:mod:`service.run.routing`) at
    :attr:`route_socket`, rather than the worker listening on the port itself."""

    def socket_of(self, index: int) -> Path:
        return self.sockets / f"worker-{index}.sock"

    @property
    def own_socket(self) -> Path:
        return self.socket_of(self.index)

    @property
    def route_socket(self) -> Path:
        """Where the router hands this worker the connections of its games."""
        return self.sockets / f"route-{self.index}.sock"


async def gather(place: WorkerPlace, own: bytes) -> bytes:
    """This worker's exposition ``own`` and every other worker's, merged (see the module)."""
    others = [index for index in range(place.count) if index != place.index]
    answers = await asyncio.gather(*(_ask(place.socket_of(index)) for index in others))
    found = {place.index: own} | {index: text for index, text in zip(others, answers) if text is not None}
    return merge(found, expected=place.count)


async def _ask(socket: Path) -> bytes | None:
    try:
        connector = aiohttp.UnixConnector(path=str(socket))
        timeout = aiohttp.ClientTimeout(total=ASK_TIMEOUT)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session, session.get(
            "http://worker/metrics", params={"scope": "worker"}
        ) as response:
            return await response.read() if response.status == 200 else None
    except (TimeoutError, aiohttp.ClientError, OSError):
        return None


def merge(expositions: Mapping[int, bytes], expected: int) -> bytes:
    """One exposition of several workers' (by index), each sample labelled with its ``worker``."""
    families: dict[str, Metric] = {}
    for index, text in sorted(expositions.items()):
        for family in text_string_to_metric_families(text.decode()):
            merged = families.get(family.name)
            if merged is None:
                merged = families[family.name] = Metric(family.name, family.documentation, family.type, family.unit)
            merged.samples += _labelled(family.samples, str(index))
    answered = GaugeMetricFamily(
        "donjon_scrape_workers", "Workers whose series this scrape holds, of the server's workers.", labels=["of"]
    )
    answered.add_metric([str(expected)], len(expositions))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed([*families.values(), answered]))
    return generate_latest(registry)


def _labelled(samples: Iterable[Sample], worker: str) -> list[Sample]:
    return [sample._replace(labels={**sample.labels, "worker": worker}) for sample in samples]


class _Fixed:
    """A collector of families already built (the merged scrape)."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> list[Metric]:
        return self._families
