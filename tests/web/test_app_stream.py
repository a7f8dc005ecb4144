"""The streamer's view, ``/app/games/{id}?view=stream``: each game's board, scores and last moves,
live, with no controls, on the background asked for, and behind by the game's spectator delay."""

from __future__ import annotations

import random

import pytest

from tests.web.conftest import DESKTOP, click_one, open_game, seat_in_browser, version_of, wait_for_status

GAMES = ("carcassonne", "castle", "castle_panic")
CONTROLS = "#game button, #game input, #game select, #game [data-command], #game [data-select], #game a"


@pytest.mark.parametrize("game", GAMES)
def test_a_stream_shows_the_board_scores_and_last_moves_live_with_no_controls(slow_bots, browser, shots, game):
    bots = {"0": "random", "1": "random"}
    created = slow_bots.request("POST", "/games", {"game": game, "seats": 2, "bots": bots, "bots_only": True})
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = context.new_page()
        open_game(page, slow_bots, created["id"], "?view=stream&bg=transparent")
        assert page.get_attribute("#game", "data-view") == "stream"
        first = version_of(page)
        page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) > {first}", timeout=20000)
        assert page.locator("#board svg, #board .board-panel").count() > 0
        assert page.locator("#scoreboard li").count() == 2
        assert page.locator(CONTROLS).count() == 0, "a stream offers no controls"
        assert page.locator("#replay-slider, #legal, #audit, header.site").filter(visible=True).count() == 0
        visible = "() => [...document.querySelectorAll('#log li')].filter((li) => li.offsetParent !== null).length"
        page.wait_for_function(f"({visible})() > 0", timeout=10000)
        shown = page.evaluate(visible)
        everything = page.eval_on_selector_all("#log li", "items => items.map(li => li.dataset.version)")
        assert 1 <= shown <= 6, (shown, everything, version_of(page))
        background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        assert background == "rgba(0, 0, 0, 0)", background
        size = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('#scoreboard li')).fontSize)")
        assert size >= 24, f"scores in {size}px are not large"
        wait_for_status(page, "finished", 90000)
        final = slow_bots.request("GET", f"/games/{created['id']}")["version"]
        page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) === {final}")
        page.screenshot(path=str(shots / f"stream-{game}.png"))
    finally:
        context.close()


def test_a_stream_takes_a_colour_and_says_when_a_background_is_not_one(served, page):
    created = served.request("POST", "/games", {"game": "castle", "seats": 2, "bots": {"1": "random"}})
    open_game(page, served, created["id"], "?view=stream&bg=%2300ff00")
    assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") == "rgb(0, 255, 0)"
    open_game(page, served, created["id"], "?view=stream&bg=red;x")
    alert = page.locator("#game .alert[role=alert]")
    assert alert.is_visible() and "bg=red;x" in alert.inner_text()


def test_a_stream_keeps_the_spectator_delay_even_in_the_players_browser(served, browser):
    created = served.request(
        "POST", "/games", {"game": "castle_panic", "seats": 2, "bots": {"1": "random"}, "spectator_delay": {"versions": 5}}
    )
    game_id = created["id"]
    contexts = [browser.new_context(viewport=DESKTOP) for _ in range(2)]
    try:
        player, stream = (context.new_page() for context in contexts)
        taken = seat_in_browser(player, served, game_id, "Ada")
        # The streamer's browser holds the seat's token too: the stream must still watch as a spectator.
        stream.goto(f"{served.base}/")
        stream.evaluate(
            "([id, seat]) => localStorage.setItem(`donjon.seat.${id}`, JSON.stringify(seat))",
            [game_id, {"seat": taken["seat"], "token": taken["token"], "name": "Ada"}],
        )
        open_game(player, served, game_id)
        rng = random.Random(7)
        while version_of(player) < 20:
            click_one(player, rng) or player.wait_for_timeout(30)
        open_game(stream, served, game_id, "?view=stream")
        stream.wait_for_timeout(500)
        spectators_see = served.request("GET", f"/games/{game_id}")["version"]
        assert version_of(stream) == spectators_see <= version_of(player) - 5
        assert stream.get_attribute("#game", "data-seat") == "spectator"
    finally:
        for context in contexts:
            context.close()
