"""Make ``docs/stream-view.png``: the streamer's view of a Castle Panic game between bots.

Run from the repository's root, with the test extras installed (Playwright, and Chromium at
``/usr/bin/chromium`` or where ``DONJON_TEST_CHROMIUM`` says)::

    python docs/stream_view_shot.py [OUT.png]

It starts its own ``donjon serve`` on a free port and a fresh data folder, creates a bot-only game,
lets it run a few dozen moves, opens ``/app/games/{id}?view=stream&bg=%23203040`` at 1280 by 720 (a
broadcasting tool's browser source) and saves the picture. Nothing of it stays behind.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "stream-view.png"
CHROMIUM = os.environ.get("DONJON_TEST_CHROMIUM", "/usr/bin/chromium")
MOVES = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def call(base: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def serve(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """``donjon serve`` with bots slowed down, so that the picture catches the game in play."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DONJON_")}
    env.update({"DONJON_WORKERS": "1", "DONJON_BOT_DELAY_MS": "150", "DONJON_LOG_FORMAT": "json"})
    command = [sys.executable, "-m", "service", "serve", "--data-dir", str(data_dir), "--port", str(port)]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def wait_ready(base: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            call(base, "GET", "/readyz")
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("donjon serve did not become ready")


def shoot(base: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    bots = {"0": "heuristic", "1": "heuristic", "2": "random"}
    game = call(base, "POST", "/games", {"game": "castle_panic", "seats": 3, "bots": bots, "bots_only": True})
    while call(base, "GET", f"/games/{game['id']}")["version"] < MOVES:
        time.sleep(0.2)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{base}/app/games/{game['id']}?view=stream&bg=%23203040")
        page.wait_for_function("Number(document.querySelector('#game')?.dataset.gameVersion) > 0")
        page.wait_for_timeout(1500)  # a few more moves arrive and settle
        page.screenshot(path=str(out))
        browser.close()


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        process = serve(Path(folder) / "data", port)
        try:
            wait_ready(f"http://127.0.0.1:{port}")
            shoot(f"http://127.0.0.1:{port}", out)
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
