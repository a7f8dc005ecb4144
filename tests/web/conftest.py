"""Fixtures for the browser tests: a real ``donjon serve`` process and a real headless Chromium.

- ``served``: a :class:`ServedDonjon` on a fresh data folder and a free port, stopped after the test;
  ``served.restart()`` stops it (SIGKILL of its process group, the embedded Valkey with it) and starts
  it again on the same folder and port, as a crash would.
- ``browser``: one Chromium for the tests of this package (tests/web), driven by Playwright's synchronous
  API, and stopped when they are done: while it runs, Playwright marks its event loop as running in the
  main thread (between its sync calls), and an asyncio test after it (pytest-aiohttp's Runner.run())
  would refuse to start its own. So the order of the test paths does not matter.
  Debian's ``/usr/bin/chromium`` is used (a tool's own browser download does not work on our machines);
  ``DONJON_TEST_CHROMIUM`` names another binary.
- ``page``: a fresh browser context and page per test; ``shots`` is the folder for screenshots
  (artifacts for people to look at, under ``.artifacts/screenshots``, never committed).

The tests are synchronous: Playwright's sync API runs its own loop, and ``donjon serve`` is a separate
process, so nothing here shares an event loop with pytest-aiohttp (and none is left once the package is done).
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
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


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
        environ.update({"DONJON_LOG_FORMAT": "json", "DONJON_WORKERS": "1", **self.extra_env})
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


@pytest.fixture(scope="package")
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


# --- helpers for the web app's tests -------------------------------------------------------------


def new_served(tmp_path: Path, name: str = "data", **env: str) -> ServedDonjon:
    """A started ``donjon serve`` with extra ``DONJON_*`` settings (the caller stops it)."""
    donjon = ServedDonjon(tmp_path / name, free_port(), env=env)
    donjon.start()
    return donjon


@pytest.fixture
def slow_bots(tmp_path: Path) -> Iterator[ServedDonjon]:
    """A service whose bots pause 25 ms between moves, so a bot-only game can be watched live."""
    donjon = new_served(tmp_path, "slow", DONJON_BOT_DELAY_MS="25")
    try:
        yield donjon
    finally:
        donjon.stop()


def game_root(page: Any) -> Any:
    return page.locator("#game")


def version_of(page: Any) -> int:
    return int(page.get_attribute("#game", "data-game-version") or 0)


def status_of(page: Any) -> str:
    return page.get_attribute("#game", "data-game-status") or ""


def open_game(page: Any, served: ServedDonjon, game_id: str, query: str = "") -> None:
    page.goto(f"{served.base}/app/games/{game_id}{query}")
    page.wait_for_function("Number(document.querySelector('#game')?.dataset.gameVersion) > 0", timeout=15000)


def seat_in_browser(page: Any, served: ServedDonjon, game_id: str, name: str = "Ada") -> dict[str, Any]:
    """Take a seat over HTTP and keep its token as the lobby would (this origin's localStorage)."""
    taken = served.request("POST", f"/games/{game_id}/seats", {"name": name})
    page.goto(f"{served.base}/")
    page.evaluate(
        "([id, seat]) => localStorage.setItem(`donjon.seat.${id}`, JSON.stringify(seat))",
        [game_id, {"seat": taken["seat"], "token": taken["token"], "name": name}],
    )
    return taken


def _usable(locator: Any) -> list[Any]:
    return [c for c in locator.all() if c.is_visible() and c.is_enabled()]


def visible_commands(page: Any, *, plain_list: bool = True) -> list[Any]:
    """The controls the page shows that send a command: the board's, else (``plain_list``) the plain list's."""
    on_board = _usable(page.locator("#board [data-command]"))
    if on_board or not plain_list:
        return on_board
    box = page.locator("#legal-box")
    if box.count() and box.get_attribute("open") is None and page.locator("#legal [data-command]").count():
        page.locator("#legal-box > summary").click()
    return _usable(page.locator("#legal [data-command]"))


OFFERS = "() => donjonApp.drawnState.legal.length > 0"


def board_commands(page: Any, rng: Any, attempts: int = 10) -> list[Any]:
    """The board's command controls, after narrowing with one of its selectors if need be. Boards draw on
    an animation frame after each update, so a moment without controls is retried a few times."""
    for _ in range(attempts):
        if not page.evaluate(OFFERS):
            return []
        commands = visible_commands(page, plain_list=False)
        if commands:
            return commands
        unpressed = _usable(page.locator("#board [data-select]:not([aria-pressed=true])"))
        keys = [c.get_attribute("data-select") for c in unpressed]
        if keys:
            with contextlib.suppress(Exception):  # the board may redraw under the click
                page.locator(f"#board [data-select={json.dumps(rng.choice(keys))}]").first.click(timeout=2000)
        page.wait_for_timeout(50)
    return []


def click_one(page: Any, rng: Any) -> str | None:
    """Click one control the page offers: the board's (narrowing a choice first when the board asks for it),
    else the plain list's. Which one it was (``"board"``, ``"list"``), or None when nothing is offered."""
    if not page.evaluate(OFFERS):
        return None
    commands, where = board_commands(page, rng), "board"
    if not commands and page.evaluate(OFFERS):
        commands, where = visible_commands(page), "list"
    if not commands:
        return None
    before = version_of(page)
    # A player out to finish takes nothing back: undo only when it is all there is.
    onward = [c for c in commands if json.loads(c.get_attribute("data-command") or "null").get("type") != "undo"]
    key = rng.choice(onward or commands).get_attribute("data-command") or "null"
    legal = page.evaluate("() => donjonApp.drawnState.legal")
    assert json.loads(key) in legal, f"a control sends {key}, which legal does not offer"
    scope = "#board" if where == "board" else "#legal"
    try:
        # By what it sends, not by position: the board may have redrawn since it was read.
        page.locator(f"{scope} [data-command={json.dumps(key)}]").first.click(timeout=5000)
    except Exception:
        if version_of(page) == before and page.evaluate(OFFERS):
            raise
        return None  # the game moved on under the click (a bot's update redrew the board): look again
    page.wait_for_function(
        f"() => Number(document.querySelector('#game').dataset.gameVersion) > {before}"
        " || !document.querySelector('#game .alert[role=alert]').hidden",
        timeout=15000,
    )
    return where


def wait_for_status(page: Any, status: str, timeout: float = 60000) -> None:
    page.wait_for_function(f"document.querySelector('#game').dataset.gameStatus === '{status}'", timeout=timeout)


def finished_bot_game(served: ServedDonjon, game: str, seats: int = 2, timeout: float = 60.0, **options: Any) -> str:
    """Create a bot-only game and wait for its end over HTTP; its id."""
    bots = {str(seat): "random" for seat in range(seats)}
    created = served.request(
        "POST", "/games", {"game": game, "seats": seats, "bots": bots, "bots_only": True, "options": options}
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if served.request("GET", f"/games/{created['id']}")["status"] == "finished":
            return str(created["id"])
        time.sleep(0.1)
    raise AssertionError(f"bot game {created['id']} did not finish in {timeout} s")


# --- accessibility: axe-core (shipped inside the axe-playwright-python package) -------------------

AXE_RUN = """async () => {
  const result = await axe.run(document, { rules: { "target-size": { enabled: true } } });
  return result.violations.map((v) => ({ id: v.id, impact: v.impact,
    nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")}: ${(n.failureSummary || "").slice(0, 200)}`) }));
}"""


def axe_script() -> Path:
    """axe-core's script, as the axe-playwright-python package ships it (found, not imported)."""
    import importlib.util

    spec = importlib.util.find_spec("axe_playwright_python")
    assert spec is not None and spec.origin, "pip install axe-playwright-python (a test extra)"
    return Path(spec.origin).parent / "axe.min.js"


def axe_violations(page: Any, impacts: tuple[str, ...] = ("serious", "critical")) -> list[dict[str, Any]]:
    """axe's violations of these impacts on the page as it is now (heading order is held to as well)."""
    page.add_script_tag(path=str(axe_script()))
    found = page.evaluate(AXE_RUN)
    return [v for v in found if v["impact"] in impacts or v["id"] == "heading-order"]
