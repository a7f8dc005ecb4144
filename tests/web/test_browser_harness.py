"""The browser harness itself: a real Chromium reaches a real ``donjon serve``."""

from __future__ import annotations

from typing import Any

from tests.web.conftest import ServedDonjon


def test_chromium_fetches_the_catalog_from_a_real_service(served: ServedDonjon, page: Any) -> None:
    page.goto(f"{served.base}/healthz")
    catalog = page.evaluate("async () => (await (await fetch('/games/catalog')).json())")
    assert {entry["id"] for entry in catalog["games"]} >= {"carcassonne", "castle", "castle_panic"}


def test_a_restarted_service_keeps_its_games(served: ServedDonjon) -> None:
    created = served.request("POST", "/games", {"game": "castle", "seats": 2})
    served.restart()
    assert served.request("GET", f"/games/{created['id']}")["id"] == created["id"]
