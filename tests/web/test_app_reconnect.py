"""A page carries on after the server is restarted: a banner while it is down, then the same game, live."""

from __future__ import annotations

import random

from tests.web.conftest import click_one, open_game, seat_in_browser, version_of


def test_the_game_page_reconnects_after_a_restart_and_play_carries_on(served, page, shots):
    created = served.request("POST", "/games", {"game": "castle_panic", "seats": 2, "bots": {"1": "random"}})
    seat_in_browser(page, served, created["id"])
    open_game(page, served, created["id"])
    rng = random.Random(3)
    for _ in range(3):
        assert click_one(page, rng)
    before = version_of(page)
    served.kill()
    page.wait_for_selector("#connection-banner:not([hidden])", timeout=10000)
    assert "down" in page.inner_text("#connection-banner")
    page.locator("#game").screenshot(path=str(shots / "reconnect-banner.png"))
    served.start()
    page.wait_for_selector("#connection-banner[hidden]", state="attached", timeout=20000)
    assert page.get_attribute("#game", "data-connection") == "open"
    assert version_of(page) >= before
    assert click_one(page, rng)
    after = served.request("GET", f"/games/{created['id']}")["version"]
    # At least: the bot's answer may land after the read (the move's own update can come first).
    page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) >= {after}")
    assert after > before
    shown, log = page.evaluate(  # read together: the bot may move again meanwhile
        "() => [Number(document.querySelector('#game').dataset.gameVersion),"
        " [...document.querySelectorAll('#log li')].map(li => Number(li.dataset.version))]"
    )
    assert log == list(range(1, shown + 1)), "the log lost or repeated an event across the restart"
