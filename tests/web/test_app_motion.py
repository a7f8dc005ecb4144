"""Motion: what changed between two versions settles into place (a new tile drops in, a monster glides
from its old place), and nothing moves for people who asked for less motion or for a replay jump."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.web.conftest import ServedDonjon, finished_bot_game, new_served, open_game

FIGURE = "#board .board-figure"


def first_version_with(served: ServedDonjon, game_id: str, event_type: str) -> int:
    events = served.request("GET", f"/games/{game_id}/events")["events"]
    return next(e["version"] for e in events if e["type"] == event_type)


def step_to(page: Any, version: int) -> dict[str, Any]:
    """Press Next and read, as soon as it is drawn, what the drawing animated."""
    page.get_by_role("button", name="Next").click()
    page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) === {version}")
    return page.evaluate(
        """(sel) => {
          const fig = document.querySelector(sel);
          const running = document.getAnimations().filter((a) => fig.contains(a.effect?.target)).length;
          return {arrived: Number(fig.dataset.arrived), glided: Number(fig.dataset.glided), running};
        }""",
        FIGURE,
    )


def test_a_placed_tile_drops_in_and_a_moving_monster_glides(served: ServedDonjon, page: Any) -> None:
    carcassonne = finished_bot_game(served, "carcassonne")
    placed = first_version_with(served, carcassonne, "tile_placed")
    open_game(page, served, carcassonne, f"?at={placed - 1}")
    motion = step_to(page, placed)
    assert motion["arrived"] == 1 and motion["glided"] == 0

    panic = finished_bot_game(served, "castle_panic", seats=1)
    moved = first_version_with(served, panic, "monsters_moved")
    open_game(page, served, panic, f"?at={moved - 1}")
    motion = step_to(page, moved)
    assert motion["glided"] >= 1

    # A jump (the slider) draws at once.
    page.eval_on_selector("#replay-slider", f"s => {{ s.value = '{moved - 1}'; s.dispatchEvent(new Event('input')); }}")
    page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) === {moved - 1}")
    assert page.get_attribute(FIGURE, "data-arrived") == "0" and page.get_attribute(FIGURE, "data-glided") == "0"


def test_nothing_moves_when_less_motion_is_asked_for(served: ServedDonjon, page: Any) -> None:
    page.emulate_media(reduced_motion="reduce")
    panic = finished_bot_game(served, "castle_panic", seats=1)
    moved = first_version_with(served, panic, "monsters_moved")
    open_game(page, served, panic, f"?at={moved - 1}")
    motion = step_to(page, moved)
    assert motion == {"arrived": 0, "glided": 0, "running": 0}
    assert page.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")


def test_a_live_page_animates_the_tiles_the_bots_place(tmp_path: Path, page: Any) -> None:
    # Bots slow enough that the game is still young when the page has loaded, however loaded the machine.
    served = new_served(tmp_path, "slower", DONJON_BOT_DELAY_MS="300")
    try:
        watch_bots_place_tiles(served, page)
    finally:
        served.stop()


def watch_bots_place_tiles(served: ServedDonjon, page: Any) -> None:
    created = served.request(
        "POST", "/games", {"game": "carcassonne", "seats": 2, "bots": {"0": "random", "1": "random"}, "bots_only": True}
    )
    open_game(page, served, created["id"])
    # Each redraw says what it animated; keep the largest seen (a later update may animate nothing).
    page.evaluate(
        """(sel) => {
          window.__arrivals = 0;
          const fig = document.querySelector(sel);
          const note = () => { window.__arrivals = Math.max(window.__arrivals, Number(fig.dataset.arrived || 0)); };
          new MutationObserver(note).observe(fig, {attributes: true, attributeFilter: ["data-arrived"]});
        }""",
        FIGURE,
    )
    page.wait_for_function("window.__arrivals >= 1", timeout=30000)
    assert page.get_attribute("#game", "data-mode") == "live"
