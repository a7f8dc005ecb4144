"""The replay scrubber: the version drawn is /state?at=N's view; ?at=N opens a moment; play steps on."""

from __future__ import annotations

from tests.web.conftest import finished_bot_game, open_game, version_of


def drawn(page):
    return page.evaluate("() => ({version: donjonApp.drawnState.version, view: donjonApp.drawnState.view})")


def assert_drawn_is_state_at(page, served, game_id, version):
    page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) === {version}")
    shown = drawn(page)
    expected = served.request("GET", f"/games/{game_id}/state?at={version}")
    assert shown == {"version": version, "view": expected["view"]}
    assert page.url.endswith(f"?at={version}")
    assert page.get_attribute("#game", "data-mode") == "replay"


def test_a_finished_castle_game_opens_at_version_10_and_scrubs_like_state_at(served, page, shots):
    game_id = finished_bot_game(served, "castle")
    final = served.request("GET", f"/games/{game_id}")["version"]
    open_game(page, served, game_id, "?at=10")
    assert_drawn_is_state_at(page, served, game_id, 10)
    assert page.locator("#legal [data-command], #board [data-command]").count() == 0
    page.locator("#game").screenshot(path=str(shots / "replay-castle-at-10.png"))
    page.get_by_role("button", name="Previous").click()
    assert_drawn_is_state_at(page, served, game_id, 9)
    page.get_by_role("button", name="Next").press("Enter")  # the keyboard works too
    assert_drawn_is_state_at(page, served, game_id, 10)
    page.get_by_role("button", name="First").click()
    assert_drawn_is_state_at(page, served, game_id, 1)
    page.get_by_role("button", name="Last").click()
    assert_drawn_is_state_at(page, served, game_id, final)
    page.eval_on_selector("#replay-slider", "s => { s.value = '32'; s.dispatchEvent(new Event('input')); }")
    assert_drawn_is_state_at(page, served, game_id, 32)
    page.locator("#replay-slider").focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert_drawn_is_state_at(page, served, game_id, 30)
    assert page.locator("#log li.future").count() == final - 30
    page.locator("#game").screenshot(path=str(shots / "replay-castle-at-30.png"))
    page.select_option("#replay-speed", "8")
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("Number(document.querySelector('#game').dataset.gameVersion) >= 34")
    page.get_by_role("button", name="Pause").click()
    paused = version_of(page)
    page.wait_for_timeout(400)
    assert version_of(page) == paused
    assert_drawn_is_state_at(page, served, game_id, paused)
    page.get_by_role("button", name="Live").click()
    page.wait_for_function(f"document.querySelector('#game').dataset.mode === 'live' && "
                           f"Number(document.querySelector('#game').dataset.gameVersion) === {final}")


def test_a_running_game_scrubs_back_and_returns_to_live(served, page):
    created = served.request("POST", "/games", {"game": "carcassonne", "seats": 2, "bots": {"1": "random"}})
    taken = served.request("POST", f"/games/{created['id']}/seats", {"name": "Ada"})
    assert taken["status"] == "active"
    open_game(page, served, created["id"])
    live = version_of(page)
    assert live >= 4
    page.get_by_role("button", name="First").click()
    assert_drawn_is_state_at(page, served, created["id"], 1)
    page.get_by_role("button", name="Live").click()
    page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) === {live}")
