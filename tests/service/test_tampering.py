"""The tampering matrix (issue 21): forged files made from real exports of all three games, each run
through all three verifiers (``donjon verify``, the JavaScript verifier, the web app's audit panel in
Chromium on a real ``donjon serve``), each verdict recorded per case. Every forgery is refused by
all three; every genuine file is accepted (a real legacy game as "legacy: weaker guarantees").

The cases are :data:`tests.service.tampering.SPECS`; the verifiers :mod:`tests.service.verdicts`.
The whole matrix is written to ``.artifacts/tampering.json`` for people to read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.service.conftest import TEST_SEED_KEY, TEST_SIGNING_KEY
from tests.service.tampering import SPECS, Forgery, public_hex
from tests.service.verdicts import CRASH, js_verdicts, panel_verdicts, python_verdicts
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, ServedDonjon, finished_bot_game, free_port

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "clients" / "js" / "test" / "data"
ARTIFACT = ROOT / ".artifacts" / "tampering.json"
VERIFIERS = ("python", "js", "panel")

pytestmark = pytest.mark.timeout(1200)


def _exports(served: ServedDonjon) -> tuple[dict[str, Any], dict[str, str]]:
    """A real export of a finished bot game of each game, and the games' ids."""
    games = {"carcassonne": 2, "castle": 2, "castle_panic": 3}
    ids = {name: finished_bot_game(served, name, seats=seats, timeout=120) for name, seats in games.items()}
    return {name: served.request("GET", f"/games/{game_id}/export") for name, game_id in ids.items()}, ids


def _panel(served: ServedDonjon, game_id: str, paths: dict[str, Path]) -> dict[str, tuple[str, str]]:
    from playwright.sync_api import sync_playwright

    # Started and stopped here, not as the web tests' package fixture: no Playwright loop outlives the module.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            return panel_verdicts(page, f"{served.base}/app/games/{game_id}", paths)
        finally:
            browser.close()


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, tuple[str, str]]]]:
    """Every case's verdict by every verifier: ``{case name: {verifier: (verdict, what it said)}}``."""
    folder = tmp_path_factory.mktemp("tampering")
    # The deployment signs with the key the older fixtures were signed with, so they are its own files.
    served = ServedDonjon(folder / "data", free_port(),
                          env={"DONJON_SIGNING_KEY": TEST_SIGNING_KEY, "DONJON_SEED_KEY": TEST_SEED_KEY})
    served.start()
    try:
        exports, ids = _exports(served)
        keys = served.request("GET", "/keys")
        public = public_hex(TEST_SIGNING_KEY)
        assert public in [key["public_key"] for key in keys["keys"]]
        fixtures = {"legacy": json.loads((FIXTURES / "legacy-castle.json").read_text()),
                    "draw1": json.loads((FIXTURES / "carcassonne-export.json").read_text())}
        forgery = Forgery(exports, TEST_SIGNING_KEY, fixtures)
        paths = {}
        for index, spec in enumerate(SPECS):
            paths[spec.name] = folder / f"case-{index:03d}.json"
            paths[spec.name].write_text(spec.make(forgery))
        started = time.monotonic()
        verdicts: dict[str, dict[str, tuple[str, str]]] = {"python": python_verdicts(paths, public), "js": js_verdicts(paths, keys, folder),
                    "panel": _panel(served, ids["carcassonne"], paths)}
        by_case = {spec.name: {v: verdicts[v][spec.name] for v in VERIFIERS} for spec in SPECS}
        table = {spec.name: {"expected": spec.expected, **by_case[spec.name]} for spec in SPECS}
        ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
        ARTIFACT.write_text(json.dumps({"seconds": round(time.monotonic() - started), "cases": table}, indent=1))
        yield by_case
    finally:
        served.stop()


def _params() -> list[Any]:
    params = []
    for spec in SPECS:
        for verifier in VERIFIERS:
            marks = [pytest.mark.xfail(reason=spec.python_xfail, strict=False)] if (
                verifier == "python" and spec.python_xfail) else []
            params.append(pytest.param(spec.name, verifier, spec.expected, marks=marks, id=f"{spec.name} [{verifier}]"))
    return params


def test_the_matrix_holds_at_least_40_cases_of_all_three_games() -> None:
    names = [spec.name for spec in SPECS]
    assert len(names) >= 40 and len(set(names)) == len(names)
    for game in ("carcassonne", "castle", "castle_panic"):
        assert sum(name.startswith(f"{game}: ") for name in names) >= 10
    assert {spec.expected for spec in SPECS} == {"accept", "legacy", "refuse"}


@pytest.mark.parametrize(("case", "verifier", "expected"), _params())
def test_each_verifier_gives_each_case_its_verdict(matrix: dict[str, dict[str, tuple[str, str]]], case: str,
                                                   verifier: str, expected: str) -> None:
    verdict, said = matrix[case][verifier]
    assert verdict != CRASH, f"{verifier} crashed on {case!r}: {said}"
    assert verdict == expected, f"{verifier} on {case!r}: {verdict}, expected {expected}: {said[:1500]}"
    if verifier == "panel" and verdict != "refuse":
        assert "this deployment lists" in said, said
    if verifier == "panel":
        assert "the node's key" not in said, said
    if verifier in ("panel", "js") and "foreign key" in case:
        assert "a key this deployment does not list" in said or "is not sha256(public key)[:16]" in said, said
