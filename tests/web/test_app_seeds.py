"""Every seat the web app takes contributes its own share of the game's seed: a ``client_seed`` made
by the browser's ``crypto.getRandomValues``, sent with the seat request and recorded as the seat's
contribution (``seed_contribution_from: "seat"``), for the creator's seat and a seat taken from the
lobby's list alike (issue 22, "Players' seeds by default")."""

from __future__ import annotations

import json
import re

from tests.web.conftest import open_game

HEX64 = re.compile(r"[0-9a-f]{64}")


def seat_requests(page) -> list[dict]:
    """The bodies of the page's seat requests, as they leave the browser."""
    sent: list[dict] = []
    page.on("request", lambda request: sent.append(json.loads(request.post_data or "{}"))
            if request.method == "POST" and request.url.endswith("/seats") else None)
    return sent


def test_every_seat_the_web_app_takes_sends_its_own_random_seed(served, page, browser):
    sent = seat_requests(page)
    page.goto(served.base + "/")
    page.select_option("#new-game", "castle")
    form = page.locator("form.create[data-game=castle]")
    form.get_by_label("Seat 2", exact=True).select_option("")  # a person: the second browser
    form.get_by_label("Your name").fill("Ada")
    title = next(g["title"] for g in served.request("GET", "/games/catalog")["games"] if g["id"] == "castle")
    form.get_by_role("button", name=f"Create a {title} game").click()
    page.wait_for_url("**/app/games/*")
    game_id = page.get_attribute("#game", "data-game-id")

    other = browser.new_context().new_page()
    try:
        sent_too = seat_requests(other)
        other.goto(served.base + "/")
        entry = other.locator(f"#games-open [data-game-id='{game_id}']")
        entry.get_by_label("Name").fill("Bea")
        entry.get_by_role("button", name="Take a seat").click()
        other.wait_for_function("document.querySelector('#game')?.dataset.gameStatus === 'active'")
    finally:
        other.context.close()

    seeds = [body["client_seed"] for body in (*sent, *sent_too)]
    assert len(seeds) == 2 and all(HEX64.fullmatch(seed) for seed in seeds) and seeds[0] != seeds[1]
    events = served.request("GET", f"/games/{game_id}/events")["events"]
    taken = [e["payload"] for e in events if e["type"] == "game.seat_taken"]
    assert [(t["seat"], t["seed_contribution"], t["seed_contribution_from"]) for t in taken] == [
        (0, seeds[0], "seat"), (1, seeds[1], "seat")]
    game = served.request("GET", f"/games/{game_id}")
    assert [s["seed_contribution"] for s in game["seats"]] == seeds
    # The page's own seed (the browser's crypto) differs from one a reload makes: nothing is fixed.
    open_game(page, served, game_id)
    again = page.evaluate("async () => (await import('/app/client/client.js')).newClientSeed()")
    assert HEX64.fullmatch(again) and again not in seeds
