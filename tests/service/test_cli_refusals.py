"""``donjon serve`` refuses to start with one clear sentence and a non-zero exit, no traceback:
a ``DONJON_REDIS_URL`` it cannot use, a data folder another ``donjon serve`` owns."""

from __future__ import annotations

import subprocess
import sys

import aiohttp
import pytest

from tests.service.test_crash_recovery import LAUNCH, ROOT, env, free_port, start_service, wait_ready


def serve(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, "serve", *args],
        cwd=ROOT,
        env={**env(), **variables},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("url", ["http://127.0.0.1:6379/0", "127.0.0.1:6379", "valkey://secret@host/0"])
def test_a_redis_url_with_a_bad_scheme_is_one_sentence_naming_the_variable(url):
    result = serve(DONJON_REDIS_URL=url)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("donjon: DONJON_REDIS_URL is not valid") and "redis://" in lines[0]
    assert "secret" not in result.stderr  # a URL may carry a password; the message never shows it


@pytest.mark.timeout(90)
async def test_a_second_serve_on_the_same_data_folder_is_one_sentence(tmp_path):
    port = free_port()
    first = start_service(tmp_path / "data", port, tmp_path / "first.log")
    try:
        async with aiohttp.ClientSession() as session:
            await wait_ready(session, f"http://127.0.0.1:{port}")
        result = serve("--data-dir", str(tmp_path / "data"), "--port", str(free_port()))
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert "is in use by another running donjon serve" in lines[0] and "--data-dir" in lines[0]
        assert "attach" not in lines[0]
        assert first.poll() is None  # the first one serves on
    finally:
        first.terminate()
        first.wait(30)
