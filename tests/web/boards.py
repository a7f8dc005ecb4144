"""Helpers of the board tests: the test-only harness page, games set up over HTTP, play by clicking."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tests.web.conftest import ROOT, ServedDonjon

STATIC = ROOT / "service" / "web" / "static"
HARNESS = Path(__file__).with_name("board_harness.html")
TYPES = {".js": "text/javascript", ".html": "text/html", ".css": "text/css"}


def open_harness(page: Any, served: ServedDonjon) -> None:
    """Serve the harness and the static board modules under /__boards__/ of the served origin (in the
    browser only: the service itself has no such route), so the page's fetches and websocket reach
    the real service."""

    def fulfil(route: Any) -> None:
        path = route.request.url.split("/__boards__/", 1)[1].split("?", 1)[0]
        file = HARNESS if path == "harness.html" else STATIC / path.removeprefix("static/")
        if not file.is_file():
            route.fulfill(status=404, body="no such file")
            return
        route.fulfill(status=200, body=file.read_bytes(), content_type=TYPES.get(file.suffix, "application/octet-stream"))

    page.route(f"{served.base}/__boards__/**", fulfil)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.__board_errors = errors  # type: ignore[attr-defined]
    # The document comes from the service itself (then replaced by the harness), so Chromium treats
    # the page as the service's own and lets its websocket reach 127.0.0.1.
    page.goto(f"{served.base}/healthz")
    page.set_content(HARNESS.read_text(encoding="utf-8"))


def page_errors(page: Any) -> list[str]:
    return list(page.__board_errors)  # type: ignore[attr-defined]


def start_board(page: Any, game: str, game_id: str, token: str | None = None, seat: int | None = None,
                at: int | None = None) -> None:
    page.evaluate("(args) => window.startBoard(args)", {"game": game, "id": game_id, "token": token, "seat": seat, "at": at})
    page.wait_for_function("() => document.getElementById('game').dataset.gameVersion !== '0'")


def new_game(served: ServedDonjon, game: str, seats: int, options: dict[str, Any], bots: dict[str, str],
             name: str = "Ada") -> tuple[str, int | None, str | None]:
    """A game with bots in the named seats; with a free seat left the harness player takes it."""
    created = served.request("POST", "/games", {"game": game, "seats": seats, "options": options, "bots": bots,
                                                "bots_only": len(bots) == seats})
    if len(bots) == seats:
        return created["id"], None, None
    seat = served.request("POST", f"/games/{created['id']}/seats", {"name": name})
    return created["id"], seat["seat"], seat["token"]


def drawn_version(page: Any) -> int:
    return int(page.get_attribute("#game", "data-game-version"))


def state(page: Any) -> dict[str, Any]:
    return page.evaluate("() => window.__state")


def visible_commands(page: Any) -> list[str]:
    return page.eval_on_selector_all("[data-command]", "els => els.map(e => e.getAttribute('data-command'))")


def reachable_commands(page: Any) -> set[str]:
    return set(page.evaluate("() => window.__reachable()"))


def canonical(commands: Any) -> set[str]:
    return {json.dumps(c, sort_keys=True) for c in commands}


def as_canonical(keys: Any) -> set[str]:
    return {json.dumps(json.loads(k), sort_keys=True) for k in keys}


def wait_for_turn_or_end(page: Any, after: int, timeout: float = 20_000) -> None:
    """Until the board shows a version past ``after`` with something to click, or the game is over."""
    page.wait_for_function(
        """(after) => { const root = document.getElementById('game');
             return root.dataset.gameStatus === 'finished' ||
               (Number(root.dataset.gameVersion) > after && window.__state.legal.length > 0); }""",
        arg=after, timeout=timeout)


def click_one_legal(page: Any, rng: random.Random, prefer: Any = None) -> str:
    """Activate controls as a person would: pick a legal command, click the selectors that lead
    to it, then the control itself. Returns the command's JSON."""
    legal = state(page)["legal"]
    choices = [c for c in legal if prefer(c)] if prefer else []
    command = rng.choice(choices or legal)
    key = json.dumps(command, separators=(",", ":"))
    target = page.evaluate(
        """async (want) => {
             const tick = () => new Promise((r) => setTimeout(r, 0));
             const find = () => [...document.querySelectorAll('[data-command]')].findIndex(e => e.getAttribute('data-command') === want);
             if (find() >= 0) return {path: []};
             const keys = () => [...document.querySelectorAll('[data-select]')].map(e => e.getAttribute('data-select'));
             const click = (k) => [...document.querySelectorAll('[data-select]')].find(e => e.getAttribute('data-select') === k).dispatchEvent(new MouseEvent('click', {bubbles: true}));
             for (const k of keys()) {
               const before = new Set(keys());
               click(k); await tick();
               if (find() >= 0) { click(k); await tick(); return {path: [k]}; }
               for (const inner of keys().filter(x => !before.has(x))) {
                 click(inner); await tick();
                 if (find() >= 0) { click(inner); await tick(); click(k); await tick(); return {path: [k, inner]}; }
                 click(inner); await tick();
               }
               if (document.querySelector('[data-select][aria-pressed="true"]')) { click(k); await tick(); }
             }
             return null; }""",
        key,
    )
    assert target is not None, f"no control leads to the legal command {key}"
    for select in target["path"]:
        page.locator(f"[data-select={json.dumps(select)}]").first.click()
    page.locator(f"[data-command={json.dumps(key)}]").first.click()
    return key
