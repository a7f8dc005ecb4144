"""The Castle Panic board in a real Chromium against a real ``donjon serve``: every version, the
Overlord's included; the viewer's own hand only."""

from __future__ import annotations

import random
from typing import Any

from tests.web.boards import (
    assert_events_in_words,
    new_game,
    on_a_phone,
    open_harness,
    page_errors,
    play_by_clicking,
    start_board,
    state,
)
from tests.web.conftest import ServedDonjon


def _prefer_plays(command: dict[str, Any]) -> bool:
    return command["type"] not in ("end_phase", "propose_trade", "decline_trade", "cancel_trade")


def test_a_whole_game_with_hidden_hands_by_clicking(served: ServedDonjon, page: Any, shots: Any, browser: Any) -> None:
    options = {"hidden_hands": True, "heroic_powers": True, "all_for_one": True}
    game_id, seat, token = new_game(served, "castle_panic", 3, options, {"1": "heuristic", "2": "random"})
    open_harness(page, served)
    start_board(page, "castle_panic", game_id, token, seat)
    hand = state(page)["view"]["hands"][seat]
    assert hand and all(page.locator(f"[data-item='{card}']").count() == 1 for card in hand)
    page.screenshot(path=str(shots / "castle-panic-start.png"))
    spectator = browser.new_context().new_page()
    try:
        open_harness(spectator, served)
        start_board(spectator, "castle_panic", game_id)
        text = spectator.content()
        assert not any(card in text for card in hand), "a hidden hand reached a spectator's page"
        assert spectator.eval_on_selector_all("[data-command],[data-select]", "els => els.length") == 0
    finally:
        spectator.context.close()
    steps = play_by_clicking(page, served, game_id, random.Random(3), prefer=_prefer_plays, shots=shots,
                             name="castle-panic-play", shot_every=15)
    assert steps > 3
    page.screenshot(path=str(shots / "castle-panic-over.png"))
    assert_events_in_words(page)
    assert page.evaluate("() => window.__summary.turn") is None
    assert page_errors(page) == []


def test_the_overlord_plays_its_hidden_tokens_by_clicking(
    served: ServedDonjon, page: Any, shots: Any, browser: Any
) -> None:
    game_id, seat, token = new_game(served, "castle_panic", 3, {"overlord": True, "my_home_is_my_castle": True},
                                    {"0": "heuristic", "1": "random"})
    assert seat == 2
    open_harness(page, served)
    start_board(page, "castle_panic", game_id, token, seat)
    page.wait_for_function("() => window.__state.legal.length > 0", timeout=20_000)
    tokens = state(page)["view"]["overlord_hand"]
    assert tokens and page.locator(f"[data-item='{tokens[0]}']").count() >= 1
    page.screenshot(path=str(shots / "castle-panic-overlord.png"))
    spectator = browser.new_context().new_page()
    try:
        open_harness(spectator, served)
        start_board(spectator, "castle_panic", game_id)
        assert "overlord_hand" not in spectator.evaluate("() => window.__state.view")
        on_a_phone(spectator, shots, "castle-panic-spectator")
    finally:
        spectator.context.close()
    steps = play_by_clicking(page, served, game_id, random.Random(8), prefer=lambda c: c["type"] != "end_phase",
                             shots=shots, name="castle-panic-overlord-play", shot_every=10)
    assert steps > 3
    assert_events_in_words(page)
    assert page_errors(page) == []


def test_solitaire_by_clicking(served: ServedDonjon, page: Any, shots: Any) -> None:
    game_id, seat, token = new_game(served, "castle_panic", 1, {"master_slayer": False, "under_construction": True}, {})
    open_harness(page, served)
    start_board(page, "castle_panic", game_id, token, seat)
    steps = play_by_clicking(page, served, game_id, random.Random(2), prefer=_prefer_plays, shots=shots,
                             name="castle-panic-solo", shot_every=25)
    assert steps > 3
    assert page_errors(page) == []
