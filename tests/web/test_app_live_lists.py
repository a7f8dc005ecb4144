"""The lobby's lists and a game page's seats follow the service by themselves, with no reload or click."""

from __future__ import annotations

from typing import Any

from tests.web.conftest import ServedDonjon, open_game


def entry(page: Any, status: str, game_id: str) -> Any:
    return page.locator(f"#games-{status} [data-game-id='{game_id}']")


def test_the_lobby_lists_refresh_themselves_and_leave_a_typed_name_alone(served: ServedDonjon, page: Any) -> None:
    page.goto(served.base + "/")
    page.wait_for_selector("#games-open li")
    created = served.request("POST", "/games", {"game": "castle", "seats": 2})["id"]
    entry(page, "open", created).wait_for(timeout=15000)  # the poll, not a click, brings it
    typed = entry(page, "open", created).get_by_label("Name")
    typed.fill("Cleo")
    served.request("POST", f"/games/{created}/seats", {"name": "Ada"})
    page.wait_for_timeout(5000)  # one poll later: the form someone types in is not redrawn under them
    assert typed.input_value() == "Cleo"
    typed.blur()
    page.wait_for_function(
        f"document.querySelector(\"#games-open [data-game-id='{created}']\")?.textContent.includes('1/2 seats')",
        timeout=15000,
    )


def test_a_spectator_page_shows_a_seat_taken_meanwhile(served: ServedDonjon, page: Any) -> None:
    created = served.request("POST", "/games", {"game": "carcassonne", "seats": 2})["id"]
    open_game(page, served, created)
    assert "Ada" not in (page.text_content("#scoreboard") or "")
    served.request("POST", f"/games/{created}/seats", {"name": "Ada"})
    page.wait_for_function("document.querySelector('#scoreboard').textContent.includes('Ada')", timeout=15000)
    served.request("POST", f"/games/{created}/seats", {"name": "Bea"})
    page.wait_for_function("document.querySelector('#scoreboard').textContent.includes('Bea')", timeout=15000)
    page.wait_for_function("document.querySelector('#game').dataset.gameStatus === 'active'", timeout=15000)
