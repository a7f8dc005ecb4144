"""The lobby: the catalog with its options and bots, creating a game with a seat, the game lists."""

from __future__ import annotations

import json
import time

from tests.web.conftest import finished_bot_game


def test_the_lobby_creates_a_game_with_options_and_a_bot_and_takes_a_seat(served, page, shots):
    page.goto(served.base + "/")
    page.select_option("#new-game", "carcassonne")
    form = page.locator("form.create[data-game=carcassonne]")
    catalog = served.request("GET", "/games/catalog")["games"]
    carcassonne = next(g for g in catalog if g["id"] == "carcassonne")
    for option in carcassonne["options"]:
        assert form.locator(f"[name={option}]").count() == 1, option
    form.get_by_label("Inns & Cathedrals").check()  # the option's label, in the game's words
    form.locator("[name=seats]").fill("3")
    form.locator("[name=seats]").dispatch_event("change")
    form.get_by_label("Seat 2", exact=True).select_option("greedy")  # seats counted from 1, as people do
    form.get_by_label("Seat 3", exact=True).select_option("random")
    form.get_by_label("Your name").fill("Ada")
    page.screenshot(path=str(shots / "lobby-create.png"), full_page=True)
    form.get_by_role("button", name="Create a Carcassonne game").click()
    page.wait_for_url("**/app/games/*")
    page.wait_for_function("Number(document.querySelector('#game')?.dataset.gameVersion) > 0")
    game_id = page.get_attribute("#game", "data-game-id")
    assert "token" not in page.url and page.get_attribute("#game", "data-seat") == "0"
    stored = json.loads(page.evaluate(f"localStorage.getItem('donjon.seat.{game_id}')"))
    assert stored["seat"] == 0 and len(stored["token"]) == 43
    assert stored["token"] not in page.url
    game = served.request("GET", f"/games/{game_id}", token=stored["token"])
    assert game["status"] == "active" and game["seat"] == 0
    assert [s.get("bot") for s in game["seats"]] == [None, "greedy", "random"]
    created = served.request("GET", f"/games/{game_id}/events")["events"][0]["payload"]
    assert created["options"]["inns_cathedrals"] is True and created["seats"] == 3


def test_the_lobby_lists_games_and_a_second_browser_takes_the_free_seat(served, page, browser):
    open_id = served.request("POST", "/games", {"game": "castle", "seats": 2})["id"]
    done_id = finished_bot_game(served, "castle_panic")
    deadline = time.monotonic() + 10  # the lobby is eventually consistent with the streams
    while done_id not in {g["id"] for g in served.request("GET", "/games?status=finished")["games"]}:
        assert time.monotonic() < deadline, "the lobby never listed the finished game"
        time.sleep(0.05)
    page.goto(served.base + "/")
    page.wait_for_selector(f"#games-open [data-game-id='{open_id}']")
    page.wait_for_selector(f"#games-finished [data-game-id='{done_id}']")
    entry = page.locator(f"#games-open [data-game-id='{open_id}']")
    entry.get_by_label("Name").fill("Bea")
    entry.get_by_role("button", name="Take a seat").click()
    page.wait_for_function("Number(document.querySelector('#game')?.dataset.gameVersion) > 0")
    assert page.get_attribute("#game", "data-seat") == "0"
    other = browser.new_context().new_page()
    try:
        other.goto(served.base + "/")
        other.locator(f"#games-open [data-game-id='{open_id}']").get_by_role("button", name="Take a seat").click()
        other.wait_for_function("document.querySelector('#game')?.dataset.gameStatus === 'active'")
        assert other.get_attribute("#game", "data-seat") == "1"
        other.goto(served.base + "/")
        other.locator(f"#games-finished [data-game-id='{done_id}']").get_by_role("link", name="Replay").click()
        other.wait_for_function("document.querySelector('#game')?.dataset.gameStatus === 'finished'")
        assert other.get_attribute("#game", "data-seat") == "spectator"
        assert other.locator("#legal [data-command]").count() == 0
    finally:
        other.context.close()
