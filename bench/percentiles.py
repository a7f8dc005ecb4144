"""The percentile every bench section reports its latencies by."""

from __future__ import annotations

__all__ = ["percentile"]


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile of ``values`` (nearest rank; NaN when there are none).

    >>> percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50)
    3.0
    """
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
