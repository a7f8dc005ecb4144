"""The web app's game page shows an archived game exactly as it showed it live: the replay scrubber
draws the same views, the audit passes on the same export (``donjon serve`` with its default
archive, the SQLite file of the data folder, restarted in between so nothing is cached); once
pruned, the page says so and where its export went, and the lobby still lists it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from typing import Any

from tests.archive_fixtures import export_content
from tests.web.conftest import ROOT, finished_bot_game, new_served, open_game


def drawn(page: Any) -> Any:
    return page.evaluate("() => ({version: donjonApp.drawnState.version, view: donjonApp.drawnState.view})")


def what_the_page_shows(page: Any, served: Any, game_id: str) -> dict[str, Any]:
    open_game(page, served, game_id, "?at=3")
    page.wait_for_function("Number(document.querySelector('#game').dataset.gameVersion) === 3")
    at_3 = drawn(page)
    page.get_by_role("button", name="Last").click()
    final = served.request("GET", f"/games/{game_id}")["version"]
    page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) === {final}")
    last = drawn(page)
    log = page.inner_text("#log")
    page.get_by_role("button", name="Verify this game's export").click()
    page.wait_for_function("document.querySelector('#audit')?.dataset.auditResult")
    checks = page.locator("#audit-result ul.audit-checked li.pass").count()
    return {"at_3": at_3, "last": last, "log": log, "audit": page.get_attribute("#audit", "data-audit-result"),
            "checks": checks}


def archived_count(served: Any) -> float:
    """Games archived, over every worker's series."""
    with urllib.request.urlopen(served.base + "/metrics", timeout=10) as response:
        return sum(float(line.rsplit(" ", 1)[1]) for line in response.read().decode().splitlines()
                   if line.startswith("donjon_games_archived_total"))


def wait_archived(served: Any, count: int = 1, timeout: float = 40.0) -> None:
    deadline = time.monotonic() + timeout
    while archived_count(served) < count:
        assert time.monotonic() < deadline, "the game was not archived"
        time.sleep(0.5)


def test_an_archived_game_shows_as_it_did_live(tmp_path, page, shots):
    served = new_served(tmp_path, DONJON_ARCHIVE_AFTER_S="6", DONJON_ARCHIVE_EVERY_S="1")
    try:
        game_id = finished_bot_game(served, "castle_panic", seats=1)
        before = what_the_page_shows(page, served, game_id)
        assert before["audit"] == "pass" and before["checks"] > 0
        wait_archived(served)
        assert (tmp_path / "data" / "archive.sqlite3").exists()
        served.restart()  # a fresh node: nothing of the game cached, the live store holds none of it
        after = what_the_page_shows(page, served, game_id)
        page.locator("#game").screenshot(path=str(shots / "archived-game.png"))
        assert after == before
        listed = served.request("GET", "/games?status=finished")["games"]
        assert game_id in [entry["id"] for entry in listed]
    finally:
        served.stop()


def every_answer(served: Any, game_id: str) -> list[Any]:
    """The game, its events and its export (without the moment it was made) as the node answers them."""
    game = served.request("GET", f"/games/{game_id}")
    events = served.request("GET", f"/games/{game_id}/events")
    return [game, events, export_content(served.request("GET", f"/games/{game_id}/export"))]


def test_the_workers_of_one_donjon_serve_archive_into_its_folders_file(tmp_path):
    """With several workers the supervisor starts the store and hands its URL on: the workers
    still archive into (and read) the data folder's SQLite file, not nothing."""
    served = new_served(tmp_path, DONJON_WORKERS="2", DONJON_ARCHIVE_AFTER_S="1", DONJON_ARCHIVE_EVERY_S="1")
    try:
        game_id = finished_bot_game(served, "castle_panic", seats=1)
        before = every_answer(served, game_id)
        wait_archived(served)
        assert (tmp_path / "data" / "archive.sqlite3").exists()
        served.restart()
        assert every_answer(served, game_id) == before
    finally:
        served.stop()


def test_a_pruned_game_says_where_its_export_went(tmp_path, page):
    served = new_served(tmp_path, DONJON_ARCHIVE_AFTER_S="1", DONJON_ARCHIVE_EVERY_S="1")
    try:
        game_id = finished_bot_game(served, "castle_panic", seats=1)
        wait_archived(served)
        folder = tmp_path / "exports"
        environ = {name: value for name, value in os.environ.items() if not name.startswith("DONJON_")}
        pruned = subprocess.run(
            [sys.executable, "-m", "service", "archive", "prune", "--data-dir", str(served.data_dir),
             "--older-than", "0", "--to", str(folder), "--json"], cwd=ROOT, env=environ, capture_output=True,
            timeout=120,
        )
        assert pruned.returncode == 0, pruned.stderr.decode()
        assert json.loads(pruned.stdout)["games"] == [game_id]
        page.goto(f"{served.base}/app/games/{game_id}")
        alert = page.get_by_role("alert")
        alert.wait_for(timeout=15000)
        text = alert.inner_text()
        assert text.startswith("This game was pruned from the archive") and (folder / f"{game_id}.json").as_uri() in text
        listed = served.request("GET", "/games?status=finished")["games"]
        assert game_id in [entry["id"] for entry in listed]
    finally:
        served.stop()
