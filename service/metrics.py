"""A small Prometheus registry: counters, gauges and histograms with labels, text format 0.0.4.

Hand-rolled rather than a dependency because the service needs a dozen series and nothing
else from a client library. Every metric the service exports is declared in :class:`Metrics`
(names and meanings are listed in the report and docs/protocol.md).
"""

from __future__ import annotations

import bisect
import math
from typing import Iterable

__all__ = ["Counter", "Gauge", "Histogram", "Registry", "Metrics"]

LabelValues = tuple[str, ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names: tuple[str, ...], values: LabelValues, extra: str = "") -> str:
    parts = [f'{name}="{_escape(value)}"' for name, value in zip(names, values)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _number(value: float) -> str:
    if value == math.inf:
        return "+Inf"
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


class _Metric:
    kind = ""

    def __init__(self, name: str, help_: str, labels: Iterable[str] = ()) -> None:
        self.name = name
        self.help = help_
        self.label_names = tuple(labels)

    def _key(self, labels: dict[str, str]) -> LabelValues:
        if not labels and not self.label_names:
            return ()
        if set(labels) != set(self.label_names):
            raise ValueError(f"{self.name} takes labels {self.label_names}, got {sorted(labels)}")
        return tuple(str(labels[name]) for name in self.label_names)

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}"]

    def render(self) -> list[str]:
        raise NotImplementedError


class Counter(_Metric):
    kind = "counter"

    def __init__(self, name: str, help_: str, labels: Iterable[str] = ()) -> None:
        super().__init__(name, help_, labels)
        self._values: dict[LabelValues, float] = {}

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = self._key(labels)
        self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, **labels: str) -> float:
        return self._values.get(self._key(labels), 0.0)

    def render(self) -> list[str]:
        return self.header() + [
            f"{self.name}{_labels(self.label_names, key)} {_number(value)}" for key, value in sorted(self._values.items())
        ]


class Gauge(Counter):
    kind = "gauge"

    def set(self, value: float, **labels: str) -> None:
        self._values[self._key(labels)] = value

    def dec(self, amount: float = 1.0, **labels: str) -> None:
        self.inc(-amount, **labels)


class Histogram(_Metric):
    kind = "histogram"
    DEFAULT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

    def __init__(self, name: str, help_: str, labels: Iterable[str] = (), buckets: Iterable[float] = DEFAULT_BUCKETS):
        super().__init__(name, help_, labels)
        self.buckets = tuple(sorted(buckets)) + (math.inf,)
        self._counts: dict[LabelValues, list[int]] = {}
        self._sums: dict[LabelValues, float] = {}

    def observe(self, value: float, **labels: str) -> None:
        key = self._key(labels)
        counts = self._counts.setdefault(key, [0] * len(self.buckets))
        counts[bisect.bisect_left(self.buckets, value)] += 1
        self._sums[key] = self._sums.get(key, 0.0) + value

    def count(self, **labels: str) -> int:
        return sum(self._counts.get(self._key(labels), ()))

    def snapshot(self, **labels: str) -> list[int]:
        """Per-bucket counts (not cumulative), the last one for +Inf."""
        return list(self._counts.get(self._key(labels), [0] * len(self.buckets)))

    def quantile(self, q: float, since: list[int] | None = None, **labels: str) -> float:
        """Upper-bound estimate of quantile ``q`` (0-1) by linear interpolation inside its bucket;
        ``since`` (an earlier :meth:`snapshot`) restricts it to what was observed after it."""
        counts = self.snapshot(**labels)
        if since is not None:
            counts = [now - before for now, before in zip(counts, since)]
        total = sum(counts)
        if not total:
            return float("nan")
        rank, seen, lower = q * total, 0, 0.0
        for bound, count in zip(self.buckets, counts):
            if count and seen + count >= rank:
                if bound == math.inf:
                    return lower
                return lower + (bound - lower) * (rank - seen) / count
            seen += count
            lower = bound if bound != math.inf else lower
        return lower

    def render(self) -> list[str]:
        lines = self.header()
        for key in sorted(self._counts):
            cumulative = 0
            for bound, count in zip(self.buckets, self._counts[key]):
                cumulative += count
                le = 'le="' + _number(bound) + '"'
                lines.append(f"{self.name}_bucket{_labels(self.label_names, key, le)} {cumulative}")
            lines.append(f"{self.name}_sum{_labels(self.label_names, key)} {_number(self._sums[key])}")
            lines.append(f"{self.name}_count{_labels(self.label_names, key)} {cumulative}")
        return lines


class Registry:
    def __init__(self) -> None:
        self._metrics: list[_Metric] = []

    def add(self, metric: _Metric) -> _Metric:
        self._metrics.append(metric)
        return metric

    def render(self) -> str:
        lines: list[str] = []
        for metric in self._metrics:
            lines.extend(metric.render())
        return "\n".join(lines) + "\n"


class Metrics:
    """Every series the service exports. One instance per app."""

    def __init__(self) -> None:
        self.registry = Registry()
        add = self.registry.add
        self.http_requests: Counter = add(
            Counter("donjon_http_requests_total", "HTTP requests served.", ("method", "route", "status"))
        )
        self.commands: Counter = add(
            Counter("donjon_commands_total", "Commands handled, by game and result (ok or error code).", ("game", "result"))
        )
        self.command_seconds: Histogram = add(
            Histogram("donjon_command_seconds", "Command to ack latency (decide + append).", ("game",))
        )
        self.command_conflicts: Counter = add(
            Counter("donjon_command_conflicts_total", "Appends retried after a version conflict.")
        )
        self.events_appended: Counter = add(Counter("donjon_events_appended_total", "Events appended by this node."))
        self.bot_moves: Counter = add(Counter("donjon_bot_moves_total", "Bot moves appended by this node.", ("game", "bot")))
        self.bot_races_lost: Counter = add(
            Counter("donjon_bot_races_lost_total", "Bot moves another writer appended first (nothing applied twice).")
        )
        self.games_created: Counter = add(Counter("donjon_games_created_total", "Games created.", ("game",)))
        self.ws_connections: Gauge = add(Gauge("donjon_ws_connections", "Open websocket connections."))
        self.ws_frames_in: Counter = add(Counter("donjon_ws_frames_in_total", "Client frames received."))
        self.ws_frames_out: Counter = add(Counter("donjon_ws_frames_out_total", "Frames sent to clients."))
        self.ws_errors: Counter = add(Counter("donjon_ws_errors_total", "Error frames sent, by code.", ("code",)))
        self.frames_encoded: Counter = add(
            Counter("donjon_frames_encoded_total", "Update frames encoded (once per visibility class and codec).")
        )
        self.updates_delivered: Counter = add(
            Counter("donjon_updates_delivered_total", "Update frames handed to sockets by the node's reader.")
        )
        self.publish_seconds: Histogram = add(
            Histogram(
                "donjon_publish_seconds",
                "The node's reader folding one game's new events and handing the update to all its sockets.",
                buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 1.0),
            )
        )
        self.update_queue_seconds: Histogram = add(
            Histogram(
                "donjon_update_queue_seconds",
                "How long a frame waited in a socket's queue (only frames that could not be written at once).",
                buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 1.0),
            )
        )
        self.games_watched: Gauge = add(Gauge("donjon_games_watched", "Games with live sockets on this node."))
        self.cache_games: Gauge = add(Gauge("donjon_cache_games", "Game projections in this node's cache."))
        self.cache_bytes: Gauge = add(
            Gauge("donjon_cache_bytes", "Estimated bytes of the projections in this node's cache.")
        )
        self.cache_evictions: Counter = add(
            Counter("donjon_cache_evictions_total", "Games this node's cache forgot to stay within its bounds.")
        )
        self.stream_reads: Counter = add(Counter("donjon_stream_reads_total", "Node stream reader XREAD calls."))
        self.store_unavailable: Counter = add(
            Counter("donjon_store_unavailable_total", "Store calls that failed because the store was unreachable.")
        )

    def render(self) -> str:
        return self.registry.render()
