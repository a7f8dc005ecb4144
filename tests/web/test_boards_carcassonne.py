"""The Carcassonne board in a real Chromium against a real ``donjon serve``: tiles as the engine turns
them, the controls equal to ``legal``, a whole game played by clicking."""

from __future__ import annotations

import random
from typing import Any

from games.carcassonne.tiles import tile_set
from tests.web.boards import (
    assert_events_in_words,
    check_drawn_edges,
    finished_bot_game,
    new_game,
    on_a_phone,
    open_harness,
    page_errors,
    play_by_clicking,
    start_board,
    state,
)
from tests.web.conftest import ServedDonjon

TILE_ORDER = ["IC-K", "IC-L", "A", "IC-D", "E", "IC-C", "V", "U", "IC-H", "L", "IC-A", "B", "F", "X", "IC-G", "C"]


def test_tiles_are_drawn_turned_as_the_engine_turns_them(served: ServedDonjon, page: Any, shots: Any) -> None:
    final = finished_bot_game(served, "carcassonne", 2, {"inns_cathedrals": True}, {"0": "greedy", "1": "random"})
    open_harness(page, served)
    start_board(page, "carcassonne", final["id"], at=final["version"])
    assets = page.evaluate("() => fetch('/games/catalog/carcassonne/assets').then(r => r.json())")
    edges = check_drawn_edges(page, assets["tiles"], final["view"]["board"], "id", lambda a, b: a == b)
    assert edges > 100
    # The port bookkeeping the board uses for follower spots is the engine's Tile.rotated.
    rotated = page.evaluate(
        """async (tiles) => { const m = await import('/__boards__/static/games/common.js');
             const turns = (t) => [0, 90, 180, 270].map((r) => m.rotatedPorts(t, r));
             return Object.fromEntries(Object.entries(tiles).map(([id, t]) => [id, turns(t)])); }""",
        assets["tiles"])
    for tile_id, tile in tile_set(True).tiles.items():
        assert rotated[tile_id] == [list(tile.rotated[q]) for q in range(4)], tile_id
    followers = sum(len(t["followers"]) for t in final["view"]["board"])
    assert page.locator(".followers .meeple").count() == followers
    assert page.eval_on_selector_all("[data-command],[data-select]", "els => els.length") == 0
    page.screenshot(path=str(shots / "carcassonne-bots-final.png"))
    on_a_phone(page, shots, "carcassonne-bots-final")
    assert page_errors(page) == []


def test_a_whole_game_with_inns_and_cathedrals_by_clicking(served: ServedDonjon, page: Any, shots: Any) -> None:
    options = {"inns_cathedrals": True, "tile_order": TILE_ORDER}
    game_id, seat, token = new_game(served, "carcassonne", 2, options, {"1": "greedy"})
    open_harness(page, served)
    start_board(page, "carcassonne", game_id, token, seat)
    page.screenshot(path=str(shots / "carcassonne-start.png"))
    # Choosing a cell shows its rotations in place; those are the only place_tile controls.
    page.locator("[data-select]").first.click()
    chosen = page.locator("[data-select][aria-pressed=true]")
    x, y = (int(v) for v in chosen.get_attribute("data-select").split(","))
    rotations = {c["args"]["rotation"] for c in state(page)["legal"] if (c["args"]["x"], c["args"]["y"]) == (x, y)}
    shown = page.eval_on_selector_all("[data-command]", "els => els.map(e => JSON.parse(e.dataset.command))")
    assert {c["args"]["rotation"] for c in shown} == rotations
    assert all((c["args"]["x"], c["args"]["y"]) == (x, y) for c in shown)
    page.screenshot(path=str(shots / "carcassonne-rotations.png"))
    page.keyboard.press("Escape")
    assert chosen.count() == 0

    def prefer(command: dict[str, Any]) -> bool:
        return command["type"] != "pass"

    steps = play_by_clicking(page, served, game_id, random.Random(11), prefer=prefer, shots=shots,
                             name="carcassonne-play", shot_every=5)
    assert steps >= len(TILE_ORDER) // 2
    page.screenshot(path=str(shots / "carcassonne-over.png"))
    assert_events_in_words(page)
    summary = page.evaluate("() => window.__summary")
    assert summary["turn"] is None and [s["points"] for s in summary["scores"]] == state(page)["view"]["scores"]
    assert page_errors(page) == []


def test_keyboard_places_a_tile_and_a_spectator_gets_no_controls(
    served: ServedDonjon, page: Any, browser: Any
) -> None:
    game_id, seat, token = new_game(served, "carcassonne", 2, {}, {"1": "random"})
    open_harness(page, served)
    start_board(page, "carcassonne", game_id, token, seat)
    version = int(page.get_attribute("#game", "data-game-version"))
    page.locator("[data-select]").first.focus()
    page.keyboard.press("Enter")
    command = page.locator("[data-command]").first
    command.focus()
    assert command.get_attribute("aria-label").startswith("place ")
    page.keyboard.press(" ")
    page.wait_for_function("(v) => Number(document.getElementById('game').dataset.gameVersion) > v", arg=version)
    assert page.evaluate("() => window.__sent.length") == 1
    spectator = browser.new_context().new_page()
    try:
        open_harness(spectator, served)
        start_board(spectator, "carcassonne", game_id)
        assert spectator.locator(".tiles [data-tile]").count() >= 2
        assert spectator.eval_on_selector_all("[data-command],[data-select]", "els => els.length") == 0
    finally:
        spectator.context.close()
