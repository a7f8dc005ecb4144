"""Fixtures for the browser tests: a real ``donjon serve`` process and a real headless Chromium.

- ``served``: a :class:`ServedDonjon` on a fresh data folder and a free port, stopped after the test;
  ``served.restart()`` stops it (SIGKILL of its process group, the embedded Valkey with it) and starts
  it again on the same folder and port, as a crash would.
- ``browser``: one Chromium for the whole session, driven by Playwright's synchronous API.
  Debian's ``/usr/bin/chromium`` is used (a tool's own browser download does not work on our machines);
  ``DONJON_TEST_CHROMIUM`` names another binary.
- ``page``: a fresh browser context and page per test; ``shots`` is the folder for screenshots
  (artifacts for people to look at, under ``.artifacts/screenshots``, never committed).

The tests are synchronous: Playwright's sync API runs its own loop, and ``donjon serve`` is a separate
process, so nothing here shares an event loop with pytest-aiohttp.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("DONJON_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-quic",
    "--disable-sync",
]
SHOTS = ROOT / ".artifacts" / "screenshots"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServedDonjon:
    """One ``donjon serve`` child process (in its own process group) with its log file."""

    def __init__(self, data_dir: Path, port: int, env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.log = data_dir.parent / f"{data_dir.name}.log"
        self.extra_env = env or {}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("DONJON_")}
        environ.update({"DONJON_LOG_FORMAT": "json", **self.extra_env})
        command = [sys.executable, "-m", "service", "serve", "--data-dir", str(self.data_dir), "--port", str(self.port)]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None and self.process.poll() is None, self.log.read_text(errors="replace")
            try:
                with urllib.request.urlopen(f"{self.base}/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"donjon serve did not become ready:\n{self.log.read_text(errors='replace')}")

    def kill(self) -> None:
        """SIGKILL the whole process group (the service and its embedded Valkey) and wait for it."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        self.process = None

    def stop(self) -> None:
        """SIGTERM, as an operator would, then SIGKILL if it lingers."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        self.kill()

    def restart(self) -> None:
        self.kill()
        self.start()

    def request(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        """One JSON request to the service (test set-up; the page under test uses its own client)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=10) as response:
            return json.loads(response.read() or b"null")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServedDonjon]:
    donjon = ServedDonjon(tmp_path / "data", free_port())
    donjon.start()
    try:
        yield donjon
    finally:
        donjon.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    # Playwright's launch gives Chromium a fresh, temporary --user-data-dir of its own.
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(scope="session")
def shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
