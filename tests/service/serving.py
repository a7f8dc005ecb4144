"""A real ``donjon serve`` process (every real game) on the session's store, for the tests that
talk to one as an outside client would, and the check that it logged no error while they did."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import requests

from tests.service.test_crash_recovery import ROOT, env, free_port


@contextlib.contextmanager
def donjon_serve(redis_url: str, folder: Path) -> Iterator[str]:
    """``donjon serve`` on ``redis_url``, its log in ``folder``; yields its base URL, then stops it
    and fails if it logged an error or a traceback (bad input is the client's fault, never one)."""
    port = free_port()
    variables = {**env(), "DONJON_REDIS_URL": redis_url, "DONJON_LOG_LEVEL": "warning"}
    log_path = folder / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "service", "serve", "--port", str(port)], cwd=ROOT, env=variables, stdout=log,
            stderr=log,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if requests.get(f"{base}/readyz", timeout=1).status_code == 200:
                        break
                except requests.ConnectionError:
                    pass
                assert time.monotonic() < deadline and process.poll() is None, "donjon serve did not become ready"
                time.sleep(0.1)
            yield base
        finally:
            process.terminate()
            process.wait(30)
    with open(log_path, encoding="utf-8") as lines:
        errors = [line for line in lines if '"level": "error"' in line or "Traceback" in line]
    assert not errors, f"donjon serve logged errors: {errors[:3]}"
