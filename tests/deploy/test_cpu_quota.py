"""The default worker count of a container is its CPU quota, not the host's cores: a container
limited to 2 CPUs on a 64-core host runs 2 workers (cgroup files as the kernel writes them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from service.run.workers import cgroup_cpu_quota, default_workers


def cores() -> int:
    return len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("cpu_max", "cpus"), [("200000 100000", 2.0), ("150000 100000", 1.5), ("50000 100000", 0.5), ("max 100000", None)]
)
def test_cgroup_v2_quota(tmp_path: Path, cpu_max: str, cpus: float | None) -> None:
    (tmp_path / "cpu.max").write_text(cpu_max + "\n")
    assert cgroup_cpu_quota(tmp_path) == cpus


def test_cgroup_v1_quota(tmp_path: Path) -> None:
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cpu_quota(tmp_path) == 1.0
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert cgroup_cpu_quota(tmp_path) is None


def test_no_cgroup_files_means_no_quota(tmp_path: Path) -> None:
    assert cgroup_cpu_quota(tmp_path) is None
    assert default_workers(tmp_path) == cores()


def test_the_quota_caps_the_workers_and_a_fraction_rounds_up(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("50000 100000\n")
    assert default_workers(tmp_path) == 1
    (tmp_path / "cpu.max").write_text(f"{(cores() + 8) * 100000} 100000\n")
    assert default_workers(tmp_path) == cores(), "a quota above the cores the process may use changes nothing"
