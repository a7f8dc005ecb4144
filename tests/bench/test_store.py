"""bench.store: the append-vs-XADD measurement the service's ``donjon bench`` reports."""

from __future__ import annotations

import pytest

from bench.store import append_vs_xadd


async def test_append_vs_xadd_reports_both_rates_and_their_ratio(redis_url) -> None:
    result = await append_vs_xadd(redis_url, 120, concurrency=3)
    assert set(result) == {
        "n", "concurrency", "append_per_s", "xadd_per_s", "ratio",
        "append_mean_us", "xadd_mean_us", "body_bytes", "server_version", "appends_per_batch",
    }
    assert (result["n"], result["concurrency"]) == (120, 3)
    assert result["append_per_s"] > 0 and result["xadd_per_s"] > 0
    assert result["ratio"] == pytest.approx(result["append_per_s"] / result["xadd_per_s"], abs=2e-3)
    assert int(result["server_version"].split(".")[0]) >= 7
    # Three tasks each awaiting its own append: one to three appends per batch.
    assert 1 <= result["appends_per_batch"] <= 3


async def test_append_vs_xadd_can_send_every_append_on_its_own(redis_url) -> None:
    result = await append_vs_xadd(redis_url, 40, concurrency=2, batch_appends=False)
    assert result["appends_per_batch"] is None and result["append_per_s"] > 0


async def test_append_vs_xadd_refuses_nonsense_sizes(redis_url) -> None:
    with pytest.raises(ValueError, match="n and concurrency must be >= 1"):
        await append_vs_xadd(redis_url, 0)
