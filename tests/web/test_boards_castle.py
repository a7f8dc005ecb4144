"""The Castle board (with the Falcon) in a real Chromium against a real ``donjon serve``."""

from __future__ import annotations

import random
from typing import Any

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
)
from tests.web.conftest import ServedDonjon

TILE_ORDER = ["B10", "F02", "B01", "B14", "F10", "B06", "B11", "B02", "F03", "B15", "B03", "B12", "B07", "F01"]


def test_the_castle_is_drawn_from_the_dataset_turned_as_the_engine_turns_it(
    served: ServedDonjon, page: Any, shots: Any
) -> None:
    final = finished_bot_game(served, "castle", 2, {"falcon": True}, {"0": "greedy", "1": "random"})
    open_harness(page, served)
    start_board(page, "castle", final["id"], at=final["version"])
    assets = page.evaluate("() => fetch('/games/catalog/castle/assets').then(r => r.json())")
    only_paths_match = lambda a, b: (a == "path") == (b == "path")  # noqa: E731
    assert check_drawn_edges(page, assets["tiles"], final["view"]["board"], "tile", only_paths_match) > 60
    view = final["view"]
    assert page.locator(".tiles [data-tile]").count() == len(view["board"])
    assert page.locator(".track rect").count() >= 100
    assert page.locator(".keep").count() == sum(1 for s in view["seats"] if s["keep"])
    assert page.eval_on_selector_all("[data-command],[data-select]", "els => els.length") == 0
    page.screenshot(path=str(shots / "castle-bots-final.png"))
    start_board(page, "castle", final["id"], at=10)
    page.screenshot(path=str(shots / "castle-bots-v10.png"))
    on_a_phone(page, shots, "castle-bots-v10")
    assert page_errors(page) == []


def test_a_whole_falcon_game_by_clicking(served: ServedDonjon, page: Any, shots: Any) -> None:
    game_id, seat, token = new_game(served, "castle", 2, {"falcon": True, "tile_order": TILE_ORDER}, {"1": "greedy"})
    open_harness(page, served)
    start_board(page, "castle", game_id, token, seat)
    page.screenshot(path=str(shots / "castle-start.png"))

    def prefer(command: dict[str, Any]) -> bool:
        return command["type"] != "pass"

    steps = play_by_clicking(page, served, game_id, random.Random(5), prefer=prefer, shots=shots,
                             name="castle-play", shot_every=4)
    assert steps >= len(TILE_ORDER) // 2
    page.screenshot(path=str(shots / "castle-over.png"))
    assert_events_in_words(page)
    assert page.evaluate("() => window.__summary.turn") is None
    assert page_errors(page) == []
