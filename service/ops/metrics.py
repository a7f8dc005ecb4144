"""Every series the service exports, on a ``prometheus_client`` registry of its own per app.

:class:`Metrics` declares them (docs/protocol.md, section Metrics, lists each with its meaning).
Each app gets its own :class:`~prometheus_client.CollectorRegistry`, so several apps in one
process (the tests' nodes, the bench) never share or collide on a series; the registry also
holds the process and GC collectors and ``donjon_build_info``.

Every ``donjon_*`` series carries the label ``node`` (``DONJON_NODE_ID``), so the scrapes of
several nodes behind one load balancer stay apart. The series the service can name in advance
(one per served game, bot, error code, route) exist from the start with a zero sample, so a
rate over them is defined before the first event.

The classes here are thin typed handles: call sites read
``metrics.commands.inc(game="castle", result="ok")``, and tests and the bench read a value back
with ``.value(...)`` (``.count(...)`` for a histogram). Gauges are the library's metrics;
counters and histograms, updated on every command and every frame sent, are plain numbers that
their own collector hands to the registry when it is scraped (the same series, without the
library's lock and label checks per update); the cache's gauges are read when scraped (``track``).

>>> metrics = Metrics(node_id="n1", games={"castle": ["greedy"]})
>>> metrics.games_created.inc(game="castle")
>>> metrics.games_created.value(game="castle")
1.0
>>> 'donjon_bot_moves_total{bot="greedy",game="castle",node="n1"} 0.0' in metrics.render().decode()
True
"""

from __future__ import annotations

import bisect
import itertools
import platform
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata

import prometheus_client
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

from service.errors import ErrorCode

__all__ = ["CONTENT_TYPE", "Counter", "Gauge", "Histogram", "Metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format that :meth:`Metrics.render` writes."""

NODE_LABEL = "node"

HTTP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds; up to 10 s so that a request waiting out a slow store still lands in a bucket."""
COMMAND_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
PUBLISH_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 1.0)
ARCHIVE_BUCKETS = (1.0, 10.0, 60.0, 120.0, 300.0, 330.0, 360.0, 600.0, 1800.0, 3600.0, 21600.0, 86400.0)
"""Seconds from a game's end to its archiving: around ``DONJON_ARCHIVE_AFTER_S`` (300) when all is well."""
QUEUE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 1.0)

# In the 0.0.4 text format each counter and histogram would also export a ``*_created`` gauge
# per series, doubling what every scrape stores for a start time process_start_time_seconds has.
prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in prometheus_client


def _version() -> str:
    try:
        return metadata.version("donjon")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


class _Plain:
    """A series kept as plain numbers and handed to the registry when it is collected (a
    collector of its own): an update is a dict lookup and an addition, with no lock and no
    library call, since these are updated on every command and every frame a socket is sent.
    Label items are kept as the caller named them and put in order when collected."""

    def __init__(
        self, registry: CollectorRegistry, node: str, name: str, help_: str, labels: tuple[str, ...] = ()
    ) -> None:
        self.name = name
        self.label_names = labels
        self._node = node
        self._help = help_

    def _check(self, labels: dict[str, str]) -> None:
        if set(labels) != set(self.label_names):
            raise ValueError(f"{self.name} takes the labels {self.label_names}, got {sorted(labels)}")

    def _values(self, key: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
        """The series' label values in the declared order, ``node`` first."""
        named = dict(key)
        return (self._node, *(str(named[label]) for label in self.label_names))

    def _family(self) -> Metric:
        raise NotImplementedError

    def describe(self) -> list[Metric]:
        """The series' name for the registry (which refuses two collectors of one name)."""
        return [self._family()]


class Counter(_Plain):
    """A counter kept as plain numbers (:class:`_Plain`)."""

    def __init__(
        self, registry: CollectorRegistry, node: str, name: str, help_: str, labels: tuple[str, ...] = ()
    ) -> None:
        super().__init__(registry, node, name, help_, labels)
        self._counts: dict[tuple[tuple[str, str], ...], float] = {} if labels else {(): 0.0}
        """Label items (as the caller named them) -> the count."""
        registry.register(self)

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        if amount < 0:
            raise ValueError(f"{self.name} can only go up, not by {amount!r}")
        key = tuple(labels.items()) if labels else ()
        counts = self._counts
        count = counts.get(key)
        if count is None:
            self._check(labels)
            count = 0.0
        counts[key] = count + amount

    def touch(self, **labels: str) -> None:
        """Make the series with these labels exist (at zero) before anything happens to it."""
        self.inc(0.0, **labels)

    def value(self, **labels: str) -> float:
        return sum(count for key, count in self._counts.items() if dict(key) == labels)

    def _family(self) -> CounterMetricFamily:
        return CounterMetricFamily(self.name, self._help, labels=(NODE_LABEL, *self.label_names))

    def collect(self) -> list[Metric]:
        family = self._family()
        totals: dict[tuple[str, ...], float] = {}
        for key, count in self._counts.items():
            values = self._values(key)
            totals[values] = totals.get(values, 0.0) + count
        for values, count in totals.items():
            family.add_metric(values, count)
        return [family]


class Gauge:
    """The library's gauge, this node's series of it (gauges change with sockets and games, not
    with every command)."""

    def __init__(self, registry: CollectorRegistry, node: str, name: str, help_: str) -> None:
        self.name = name
        self._registry = registry
        self._node = node
        self._plain = prometheus_client.Gauge(name, help_, (NODE_LABEL,), registry=registry).labels(node=node)

    def inc(self, amount: float = 1.0) -> None:
        self._plain.inc(amount)

    def dec(self, amount: float = 1.0) -> None:
        self._plain.dec(amount)

    def set(self, value: float) -> None:
        self._plain.set(value)

    def track(self, read: Callable[[], float]) -> None:
        """Take the value from ``read()`` whenever the registry is collected, rather than from
        :meth:`set` at every change."""
        self._plain.set_function(read)

    def value(self) -> float:
        return self._registry.get_sample_value(self.name, {NODE_LABEL: self._node}) or 0.0


class Histogram(_Plain):
    """A histogram kept as plain numbers (:class:`_Plain`): per series, the count of each
    bucket (an observation goes in the first whose bound is at least it) and the sum."""

    def __init__(
        self,
        registry: CollectorRegistry,
        node: str,
        name: str,
        help_: str,
        labels: tuple[str, ...] = (),
        *,
        buckets: Iterable[float],
    ) -> None:
        super().__init__(registry, node, name, help_, labels)
        self._bounds = tuple(sorted(float(bound) for bound in buckets))
        self._bucket_names = [*(floatToGoString(bound) for bound in self._bounds), "+Inf"]  # type: ignore[no-untyped-call]
        self._series: dict[tuple[tuple[str, str], ...], list[float]] = {}
        """Label items -> each bucket's own count, then the count above the last bound, then the sum."""
        if not labels:
            self.touch()
        registry.register(self)

    def observe(self, value: float, **labels: str) -> None:
        key = tuple(labels.items()) if labels else ()
        series = self._series.get(key)
        if series is None:
            series = self._new(labels)
        series[bisect.bisect_left(self._bounds, value)] += 1
        series[-1] += value

    def _new(self, labels: dict[str, str]) -> list[float]:
        self._check(labels)
        series = self._series[tuple(labels.items())] = [0.0] * (len(self._bounds) + 2)
        return series

    def touch(self, **labels: str) -> None:
        """Make the series with these labels exist (at zero) before anything happens to it."""
        if tuple(labels.items()) not in self._series:
            self._new(labels)

    def count(self, **labels: str) -> float:
        return sum(sum(series[:-1]) for key, series in self._series.items() if dict(key) == labels)

    def _family(self) -> HistogramMetricFamily:
        return HistogramMetricFamily(self.name, self._help, labels=(NODE_LABEL, *self.label_names))

    def collect(self) -> list[Metric]:
        family = self._family()
        totals: dict[tuple[str, ...], list[float]] = {}
        for key, series in self._series.items():
            total = totals.setdefault(self._values(key), [0.0] * len(series))
            for index, amount in enumerate(series):
                total[index] += amount
        for values, series in totals.items():
            cumulative = itertools.accumulate(series[:-1])
            family.add_metric(values, list(zip(self._bucket_names, cumulative, strict=True)), sum_value=series[-1])
        return [family]


class Metrics:
    """Every series the service exports, on a registry of its own. One instance per app.

    ``node_id`` labels every ``donjon_*`` series; ``games`` (game -> the names of its bots)
    names the per-game series that exist from the start. :meth:`touch_routes` does the same
    for the HTTP latency of each route, once the routes are known.
    """

    def __init__(self, node_id: str = "", games: Mapping[str, Iterable[str]] | None = None) -> None:
        self.node_id = node_id
        self.registry = CollectorRegistry()
        prometheus_client.ProcessCollector(registry=self.registry)
        prometheus_client.GCCollector(registry=self.registry)
        prometheus_client.PlatformCollector(registry=self.registry)
        build = prometheus_client.Info("donjon_build", "The donjon version this node runs.", registry=self.registry)
        build.info({"version": _version(), NODE_LABEL: node_id, "python": platform.python_version()})
        self._http_series()
        self._command_series()
        self._socket_series()
        self._node_series()
        self._archive_series()
        for code in ErrorCode:
            self.ws_errors.touch(code=code.value)
        for game, bots in (games or {}).items():
            self._touch_game(game, bots)

    def _counter(self, name: str, help_: str, labels: tuple[str, ...] = ()) -> Counter:
        return Counter(self.registry, self.node_id, name, help_, labels)

    def _gauge(self, name: str, help_: str) -> Gauge:
        return Gauge(self.registry, self.node_id, name, help_)

    def _histogram(
        self, name: str, help_: str, labels: tuple[str, ...] = (), *, buckets: Iterable[float]
    ) -> Histogram:
        return Histogram(self.registry, self.node_id, name, help_, labels, buckets=buckets)

    def _http_series(self) -> None:
        self.http_requests = self._counter(
            "donjon_http_requests_total", "HTTP requests served.", ("method", "route", "status")
        )
        self.http_request_seconds = self._histogram(
            "donjon_http_request_seconds",
            "HTTP request to response, by route (websockets are not timed).",
            ("method", "route"),
            buckets=HTTP_BUCKETS,
        )

    def _command_series(self) -> None:
        """Commands, appends, bots and games."""
        self.commands = self._counter(
            "donjon_commands_total", "Commands handled, by game and result (ok or error code).", ("game", "result")
        )
        self.command_seconds = self._histogram(
            "donjon_command_seconds", "Command to ack latency (decide + append).", ("game",), buckets=COMMAND_BUCKETS
        )
        self.command_conflicts = self._counter(
            "donjon_command_conflicts_total", "Appends retried after a version conflict."
        )
        self.events_appended = self._counter("donjon_events_appended_total", "Events appended by this node.")
        self.bot_moves = self._counter("donjon_bot_moves_total", "Bot moves appended by this node.", ("game", "bot"))
        self.bot_races_lost = self._counter(
            "donjon_bot_races_lost_total", "Bot moves another writer appended first (nothing applied twice)."
        )
        self.games_created = self._counter("donjon_games_created_total", "Games created.", ("game",))

    def _socket_series(self) -> None:
        """Websockets and the updates fanned out to them."""
        self.ws_connections = self._gauge("donjon_ws_connections", "Open websocket connections.")
        self.ws_frames_in = self._counter("donjon_ws_frames_in_total", "Client frames received.")
        self.ws_frames_out = self._counter("donjon_ws_frames_out_total", "Frames sent to clients.")
        self.ws_errors = self._counter("donjon_ws_errors_total", "Error frames sent, by code.", ("code",))
        self.frames_encoded = self._counter(
            "donjon_frames_encoded_total", "Update frames encoded (once per visibility class and codec)."
        )
        self.updates_delivered = self._counter(
            "donjon_updates_delivered_total", "Update frames handed to sockets by the node's reader."
        )
        self.publish_seconds = self._histogram(
            "donjon_publish_seconds",
            "The node's reader folding one game's new events and handing the update to all its sockets.",
            buckets=PUBLISH_BUCKETS,
        )
        self.update_queue_seconds = self._histogram(
            "donjon_update_queue_seconds",
            "How long a frame waited in a socket's queue (only frames that could not be written at once).",
            buckets=QUEUE_BUCKETS,
        )

    def _node_series(self) -> None:
        """The node's cache, its stream reader and feed, and the store."""
        self.games_watched = self._gauge("donjon_games_watched", "Games with live sockets on this node.")
        self.cache_games = self._gauge("donjon_cache_games", "Game projections in this node's cache.")
        self.cache_bytes = self._gauge("donjon_cache_bytes", "Estimated bytes of the projections in this node's cache.")
        self.cache_evictions = self._counter(
            "donjon_cache_evictions_total", "Games this node's cache forgot to stay within its bounds."
        )
        self.stream_reads = self._counter("donjon_stream_reads_total", "Node stream reader XREAD calls.")
        self.feed_notices = self._counter(
            "donjon_feed_notices_total", "Append notices (SPUBLISH) the node's feed received."
        )
        self.feed_gap_reads = self._counter(
            "donjon_feed_gap_reads_total",
            "Announced games read from the stream because the notice did not continue what was shown.",
        )
        self.feed_polls = self._counter(
            "donjon_feed_polls_total", "Safety-net polls: a slice of the watched games read whatever the notices said."
        )
        self.feed_reconnects = self._counter(
            "donjon_feed_reconnects_total", "Subscriber connections lost (their games subscribed again on a new one)."
        )
        self.store_unavailable = self._counter(
            "donjon_store_unavailable_total", "Store calls that failed because the store was unreachable."
        )

    def _archive_series(self) -> None:
        """The archive of finished games (``service/run/archiving.py``)."""
        self.archive_backlog = self._gauge(
            "donjon_archive_backlog", "Finished games still in the live store at this node's last archiving pass."
        )
        self.archive_oldest_seconds = self._gauge(
            "donjon_archive_oldest_unarchived_seconds",
            "Age of the oldest finished game still live at the last pass (0: none).",
        )
        self.games_archived = self._counter(
            "donjon_games_archived_total", "Finished games this node moved to the archive."
        )
        self.archive_seconds = self._histogram(
            "donjon_archive_latency_seconds",
            "From a game's last event to its removal from the live store, once archived.",
            buckets=ARCHIVE_BUCKETS,
        )
        self.archive_failures = self._counter(
            "donjon_archive_failures_total", "Archiving passes cut short by the store or the archive being unreachable."
        )

    def _touch_game(self, game: str, bots: Iterable[str]) -> None:
        self.games_created.touch(game=game)
        self.commands.touch(game=game, result="ok")
        self.command_seconds.touch(game=game)
        for bot in bots:
            self.bot_moves.touch(game=game, bot=bot)

    def touch_routes(self, routes: Iterable[tuple[str, str]]) -> None:
        """Make the latency series of each ``(method, route)`` exist from the start."""
        for method, route in routes:
            self.http_request_seconds.touch(method=method, route=route)

    def render(self) -> bytes:
        """Every series in the text format of :data:`CONTENT_TYPE`."""
        return prometheus_client.generate_latest(self.registry)
