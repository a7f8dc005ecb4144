"""Helpers of the board tests: the test-only harness page, games set up over HTTP, play by clicking."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout

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
        kind = TYPES.get(file.suffix, "application/octet-stream")
        route.fulfill(status=200, body=file.read_bytes(), content_type=kind)

    page.route(f"{served.base}/__boards__/**", fulfil)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.__board_errors = errors
    # The document comes from the service itself (then replaced by the harness), so Chromium treats
    # the page as the service's own and lets its websocket reach 127.0.0.1.
    page.goto(f"{served.base}/healthz")
    page.set_content(HARNESS.read_text(encoding="utf-8"))


def page_errors(page: Any) -> list[str]:
    return list(page.__board_errors)


def start_board(page: Any, game: str, game_id: str, token: str | None = None, seat: int | None = None,
                at: int | None = None) -> None:
    page.evaluate("() => { document.getElementById('game').dataset.gameVersion = '0'; }")
    args = {"game": game, "id": game_id, "token": token, "seat": seat, "at": at}
    page.evaluate("(args) => window.startBoard(args)", args)
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


def click_one_legal(page: Any, rng: random.Random, prefer: Any = None) -> str | None:
    """Activate controls as a person would: pick a legal command, click the selectors that lead
    to it, then the control itself. Returns the command's JSON, or None when the game moved on
    before the click (another seat's move took the control away)."""
    legal = state(page)["legal"]
    choices = [c for c in legal if prefer(c)] if prefer else []
    command = rng.choice(choices or legal)
    key = json.dumps(command, separators=(",", ":"))
    version = drawn_version(page)
    target = page.evaluate("(want) => window.__pathTo(want)", key)
    if target is None and drawn_version(page) > version:
        return None
    assert target is not None, f"no control leads to the legal command {key}"
    try:
        for select in target["path"]:
            page.locator(f"[data-select={json.dumps(select)}]").first.click(timeout=3000)
        page.locator(f"[data-command={json.dumps(key)}]").first.click(timeout=3000)
    except PlaywrightTimeout:
        # Another seat (a bot) moved meanwhile and the control went with its turn.
        if drawn_version(page) > version:
            return None
        raise
    return key


def covered_controls(page: Any) -> list[str]:
    """The board's commands whose control is hidden at its own centre by another element."""
    return page.evaluate(
        """() => [...document.querySelectorAll('svg [data-command]')].filter((el) => {
             const box = el.getBoundingClientRect();
             const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
             return !(hit && el.contains(hit)); }).map((el) => el.getAttribute('aria-label'))""")


def sent(page: Any) -> list[Any]:
    return page.evaluate("() => window.__sent")


def play_by_clicking(page: Any, served: ServedDonjon, game_id: str, rng: random.Random, *, prefer: Any = None,
                     shots: Path | None = None, name: str = "", shot_every: int = 0, max_steps: int = 600) -> int:
    """Play the harness seat's part of a whole game by clicking controls only. At every step the
    commands the board offers (through its selectors) are exactly ``legal``, and the click sends
    exactly the command chosen. Returns how many commands were sent."""
    steps = 0
    while True:
        wait_for_turn_or_end(page, drawn_version(page) - 1)
        if page.get_attribute("#game", "data-game-status") == "finished":
            break
        version = drawn_version(page)
        reachable, legal, covered = reachable_commands(page), state(page)["legal"], covered_controls(page)
        if drawn_version(page) != version:
            continue  # a bot moved while the controls were read: read them again
        assert as_canonical(reachable) == canonical(legal), f"step {steps}"
        assert covered == [], (steps, covered)
        errors = len(page.evaluate("() => window.__errors"))
        chosen = click_one_legal(page, rng, prefer)
        if chosen is None:
            continue
        assert json.dumps(sent(page)[-1], separators=(",", ":")) == chosen
        page.wait_for_function(
            "([v, e]) => Number(document.getElementById('game').dataset.gameVersion) > v || window.__errors.length > e",
            arg=[version, errors])
        refused = page.evaluate("() => window.__errors")[errors:]
        # A refusal is only acceptable when another seat's move made the command stale.
        assert not refused or served.request("GET", f"/games/{game_id}")["version"] > version, refused
        steps += 1
        if shots is not None and shot_every and steps % shot_every == 0:
            page.screenshot(path=str(shots / f"{name}-step{steps:03d}.png"))
        assert steps < max_steps, "the game did not end"
    final = served.request("GET", f"/games/{game_id}")
    assert final["status"] == "finished" and drawn_version(page) == final["version"]
    assert page.eval_on_selector_all("[data-command],[data-select]", "els => els.length") == 0
    return steps


def drawn_rotations(page: Any) -> list[dict[str, Any]]:
    """Each drawn tile's cell and the rotation matrix of its art, as the browser applies it."""
    return page.evaluate(
        """() => [...document.querySelectorAll('[data-tile]')].map((g) => {
             const m = g.querySelector('.tile-art').transform.baseVal.consolidate().matrix;
             const [x, y] = g.getAttribute('data-tile').split(',').map(Number);
             return {x, y, a: m.a, b: m.b, c: m.c, d: m.d}; })""")


def port_midpoint(port: int) -> tuple[float, float]:
    """The middle of a port on a 100-unit tile centred on (0, 0), y down (as drawn)."""
    side, pos = divmod(port, 3)
    f = (pos + 0.5) / 3 * 100 - 50
    return [(f, -50.0), (50.0, f), (-f, 50.0), (-50.0, -f)][side]


def drawn_port_map(matrix: dict[str, float]) -> list[int]:
    """Where the drawing puts each design port: the board port whose midpoint it lands on."""
    out = []
    for port in range(12):
        x, y = port_midpoint(port)
        tx, ty = matrix["a"] * x + matrix["c"] * y, matrix["b"] * x + matrix["d"] * y
        out.append(min(range(12), key=lambda p: (port_midpoint(p)[0] - tx) ** 2 + (port_midpoint(p)[1] - ty) ** 2))
    return out


def check_drawn_edges(
    page: Any, tiles: dict[str, Any], board: list[dict[str, Any]], tile_key: str, must_match: Any
) -> int:
    """Every drawn tile is turned as the engine turns it ((p + 3r/90) mod 12), and, read from the
    drawing alone, every pair of neighbours meets as the engine's edge matching demands. Returns the
    number of shared edges checked."""
    drawn = {(d["x"], d["y"]): drawn_port_map(d) for d in drawn_rotations(page)}
    kinds: dict[tuple[int, int], list[str | None]] = {}
    for placed in board:
        cell = (placed["x"], placed["y"])
        design = tiles[placed[tile_key]]
        mapping = drawn[cell]
        assert mapping == [(p + 3 * placed["rotation"] // 90) % 12 for p in range(12)], (placed, mapping)
        at_board: list[str | None] = [None] * 12
        for port, segment in enumerate(design["ports"]):
            at_board[mapping[port]] = None if segment is None else design["segments"][segment]["kind"]
        kinds[cell] = at_board
    checked = 0
    for (x, y), mine in kinds.items():
        for side, (dx, dy) in enumerate([(0, -1), (1, 0), (0, 1), (-1, 0)]):
            theirs = kinds.get((x + dx, y + dy))
            if theirs is None:
                continue
            facing = 3 * ((side + 2) % 4) + 1
            assert must_match(mine[3 * side + 1], theirs[facing]), ((x, y), side, mine, theirs)
            checked += 1
    return checked


def finished_bot_game(served: ServedDonjon, game: str, seats: int, options: dict[str, Any], bots: dict[str, str],
                      timeout: float = 90.0) -> dict[str, Any]:
    """A game the service's bots play to its end; its final ``GET /games/{id}`` body."""
    import time

    game_id, _, _ = new_game(served, game, seats, options, bots)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = served.request("GET", f"/games/{game_id}")
        if body["status"] == "finished":
            return body
        time.sleep(0.2)
    raise AssertionError(f"the bots did not finish game {game_id}")


def described(page: Any) -> list[list[str]]:
    return page.evaluate("() => window.__described")


def assert_events_in_words(page: Any) -> None:
    """Every event of the log was put in words (never the raw fallback ``type {json}``)."""
    texts = described(page)
    assert texts
    for event_type, text in texts:
        assert text and not text.startswith(f"{event_type} {{"), (event_type, text)


def on_a_phone(page: Any, shots: Path, name: str) -> None:
    """A phone-sized viewport: the board fits its width (no sideways scrolling)."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(100)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    box = page.locator(".board-figure svg").bounding_box()
    assert box is not None and box["width"] <= 390 and box["width"] > 300
    page.screenshot(path=str(shots / f"{name}-phone.png"), full_page=True)
