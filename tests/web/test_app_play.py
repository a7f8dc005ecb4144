"""A whole game of each game played in the browser by clicking only the controls the page shows."""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest

from tests.web.conftest import click_one, open_game, seat_in_browser, status_of, version_of

GAMES = {
    # game: (seats, the bot filling seat 1, options) - one person against one bot keeps it short
    "carcassonne": (2, "random", {}),
    "castle": (2, "random", {}),
    "castle_panic": (2, "random", {}),
}


def play_to_the_end(page, rng, shots, name, limit_s=90.0):
    clicks, deadline, shot_at = Counter(), time.monotonic() + limit_s, {5, 40}
    while status_of(page) != "finished":
        assert time.monotonic() < deadline, f"{name}: not finished after {clicks} clicks"
        where = click_one(page, rng)
        if where:
            clicks[where] += 1
            if clicks.total() in shot_at:
                page.locator("#game").screenshot(path=str(shots / f"play-{name}-{clicks.total():03d}.png"))
        else:
            page.wait_for_timeout(30)
    return clicks


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_whole_game_is_played_by_clicking_the_page(served, page, shots, game):
    seats, bot, options = GAMES[game]
    created = served.request("POST", "/games", {"game": game, "seats": seats, "bots": {"1": bot}, "options": options})
    seat_in_browser(page, served, created["id"])
    open_game(page, served, created["id"])
    assert page.get_attribute("#game", "data-seat") == "0"
    clicks = play_to_the_end(page, random.Random(11), shots, game)
    page.locator("#game").screenshot(path=str(shots / f"play-{game}-end.png"))
    final = served.request("GET", f"/games/{created['id']}")
    assert final["status"] == "finished" and clicks.total() > 3
    # Every game has a board module: its own controls do the playing, the plain list is only a fallback.
    assert clicks["board"] == clicks.total(), clicks
    page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) === {final['version']}")
    assert version_of(page) == final["version"]
    assert page.locator("#audit").is_visible()
