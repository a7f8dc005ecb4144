"""The life of a game in the web app: axe on every page at desktop and phone sizes, no scroll jumps,
``?at=`` checked, the lobby setting every feature of ``POST /games``, people's names and the games'
words, resign (confirmed), undo, rematch, the spectator count live, and pages opened right at a
game's end drawing its end."""

from __future__ import annotations

import json
import random
import re
import time
import urllib.error
from typing import Any

import pytest

from tests.web.conftest import (
    DESKTOP,
    PHONE,
    axe_violations,
    click_one,
    finished_bot_game,
    open_game,
    seat_in_browser,
    status_of,
    version_of,
    wait_for_status,
)

GAMES = ("carcassonne", "castle", "castle_panic")
LIVE = "() => document.querySelector('#game')?.dataset.mode === 'live'"


def person_against_bot(served, game: str, **fields: Any) -> str:
    created = served.request("POST", "/games", {"game": game, "seats": 2, "bots": {"1": "random"}, **fields})
    return str(created["id"])


def assert_no_axe_violations(page, where: str) -> None:
    found = axe_violations(page)
    assert not found, f"{where}: {json.dumps(found, indent=1)}"


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_no_serious_axe_violation_on_any_page(served, browser, size):
    context = browser.new_context(viewport=DESKTOP if size == "desktop" else PHONE)
    page = context.new_page()
    try:
        page.goto(f"{served.base}/")
        page.wait_for_selector("#games-open li")
        assert_no_axe_violations(page, f"lobby ({size})")
        page.select_option("#clock-castle_panic, select[name=clock_kind]", "fischer")
        assert_no_axe_violations(page, f"lobby with a clock ({size})")
        for game in GAMES:
            game_id = person_against_bot(served, game)
            seat_in_browser(page, served, game_id)
            open_game(page, served, game_id)
            page.wait_for_function("() => donjonApp.drawnState.legal.length > 0")
            assert_no_axe_violations(page, f"{game}, a seat ({size})")
            page.click("#resign")
            assert_no_axe_violations(page, f"{game}, resigning ({size})")
            finished = finished_bot_game(served, game)
            open_game(page, served, finished)
            wait_for_status(page, "finished")
            assert_no_axe_violations(page, f"{game}, finished ({size})")
            open_game(page, served, finished, "?at=5")
            assert_no_axe_violations(page, f"{game}, replay ({size})")
            open_game(page, served, finished, "?view=stream")
            assert_no_axe_violations(page, f"{game}, stream ({size})")
    finally:
        context.close()


def test_updates_never_scroll_the_page_on_a_phone(slow_bots, browser, shots):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        bots = {"0": "random", "1": "random"}
        created = slow_bots.request("POST", "/games", {"game": "castle_panic", "seats": 2, "bots": bots, "bots_only": True})
        open_game(page, slow_bots, created["id"])
        page.evaluate("() => window.scrollTo(0, 0)")
        seen = page.evaluate("""() => new Promise((done) => {
            const start = Number(document.querySelector('#game').dataset.gameVersion), ys = [];
            const tick = () => {
              ys.push(window.scrollY);
              const now = Number(document.querySelector('#game').dataset.gameVersion);
              if (now >= start + 20 || document.querySelector('#game').dataset.gameStatus === 'finished') done({ys, moved: now - start});
              else requestAnimationFrame(tick);
            };
            tick();
          })""")
        assert seen["moved"] >= 5, seen["moved"]
        assert max(seen["ys"]) == 0, "an update scrolled the page"
        board_top = page.evaluate("() => document.querySelector('#board').getBoundingClientRect().top")
        assert board_top < PHONE["height"], "the board is off screen"
        log = page.evaluate("() => { const l = document.querySelector('#log'); return [l.scrollTop, l.scrollHeight, l.clientHeight, l.tabIndex]; }")
        assert log[3] == 0 and log[1] - log[0] - log[2] < 48, f"the log does not follow its end: {log}"
        page.screenshot(path=str(shots / "phone-no-scroll.png"))
    finally:
        context.close()


@pytest.mark.parametrize("at", ["0", "-3", "abc", "9999", "2.5"])
def test_a_bad_at_is_said_plainly_and_the_game_shown_live(served, page, at):
    game_id = finished_bot_game(served, "castle_panic")
    with pytest.raises(urllib.error.HTTPError) as refused:  # the API refuses it as well
        served.request("GET", f"/games/{game_id}/state?at={at}")
    assert refused.value.code == 400
    open_game(page, served, game_id, f"?at={at}")
    page.wait_for_function(LIVE)
    alert = page.locator("#game .alert[role=alert]")
    assert alert.is_visible()
    text = alert.inner_text()
    assert f"?at={at}" in text and "live" in text, text


def test_the_lobby_sets_every_feature_of_post_games_and_names_options_in_words(served, page):
    page.goto(f"{served.base}/")
    page.select_option("#new-game", "carcassonne")
    labels = page.eval_on_selector_all("form.create .options label", "ls => ls.map(l => l.textContent)")
    assert labels and not [label for label in labels if "_" in label], labels
    assert "Inns & Cathedrals" in labels
    page.check("#opt-carcassonne-inns_cathedrals")
    page.select_option("#clock-carcassonne", "fischer")
    page.fill("#clock-initial-carcassonne", "90")
    page.fill("#clock-increment-carcassonne", "2.5")
    page.select_option("#on-timeout-carcassonne", "bot")
    page.uncheck("#undo-carcassonne")
    page.select_option("#delay-carcassonne", "seconds")
    page.fill("#delay-amount-carcassonne", "1.5")
    page.fill("#name-carcassonne", "Grace")
    page.click("form.create button[type=submit]")
    page.wait_for_url(re.compile(r"/app/games/"))
    game_id = page.url.rsplit("/", 1)[1]
    created = served.request("GET", f"/games/{game_id}/events")["events"][0]["payload"]
    assert created["options"]["inns_cathedrals"] is True
    assert {k: created["clock"][k] for k in ("initial_ms", "increment_ms")} == {"initial_ms": 90000, "increment_ms": 2500}
    assert created["on_timeout"] == "bot" and created["undo"] is False
    assert created["spectator_delay"] == {"ms": 1500}
    page.wait_for_function("Number(document.querySelector('#game')?.dataset.gameVersion) > 0")
    assert "You play as Grace" in page.inner_text(".game-head")
    for kind, expected in (("per_move", {"per_move_ms": 30000}), ("bank", {"initial_ms": 300000, "increment_ms": 0})):
        page.goto(f"{served.base}/")
        page.select_option("#new-game", "castle")
        page.select_option("#clock-castle", kind)
        page.click("form.create button[type=submit]")
        page.wait_for_url(re.compile(r"/app/games/"))
        created = served.request("GET", f"/games/{page.url.rsplit('/', 1)[1]}/events")["events"][0]["payload"]
        assert {k: created["clock"].get(k) for k in expected} == expected and created["spectator_delay"] is None


def test_the_lobby_shows_each_games_version_now(slow_bots, page):
    bots = {"0": "random", "1": "random"}
    created = slow_bots.request("POST", "/games", {"game": "castle_panic", "seats": 2, "bots": bots, "bots_only": True})
    page.goto(f"{slow_bots.base}/")
    entry = page.locator(f"#games-active [data-game-id='{created['id']}'], #games-finished [data-game-id='{created['id']}']")
    entry.first.wait_for()
    first = int(re.search(r"version (\d+)", entry.first.inner_text()).group(1))
    page.wait_for_function(
        f"""() => {{
          const li = document.querySelector("[data-game-id='{created['id']}']");
          const m = li && /version (\\d+)/.exec(li.textContent);
          return m && Number(m[1]) > {first};
        }}""",
        timeout=20000,
    )
    listed = [e for status in ("active", "finished") for e in slow_bots.request("GET", f"/games?status={status}")["games"]]
    now = slow_bots.request("GET", f"/games/{created['id']}")["version"]
    assert next(e["version"] for e in listed if e["id"] == created["id"]) <= now
    assert all("delayed" not in e for e in listed)


def test_people_are_named_and_commands_said_in_words(served, page):
    game_id = person_against_bot(served, "castle_panic")
    seat_in_browser(page, served, game_id, "Ada")
    open_game(page, served, game_id)
    page.wait_for_function("() => donjonApp.drawnState.legal.length > 0")
    page.locator("#legal-box > summary").click()
    text = page.inner_text("#game")
    assert "Ada" in page.inner_text("#scoreboard") and "You play as Ada" in text
    assert "{}" not in text and not re.search(r"[a-z]#\d", text), "an internal name reaches people"
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", page.inner_text("#legal")), page.inner_text("#legal")
    assert "seat 0" not in page.inner_text("#log")


def test_resign_asks_first_then_the_rematch_seats_the_same_people(served, page):
    game_id = person_against_bot(served, "castle")
    seat_in_browser(page, served, game_id, "Ada")
    open_game(page, served, game_id)
    page.wait_for_function(LIVE)
    page.click("#resign")
    assert page.locator("#resign-confirm").is_visible()
    assert page.evaluate("() => document.activeElement.id") == "resign-no"
    page.click("#resign-no")
    assert not page.locator("#resign-confirm").is_visible() and status_of(page) != "finished"
    page.click("#resign")
    page.click("#resign-yes")
    wait_for_status(page, "finished", 15000)
    left = [e for e in served.request("GET", f"/games/{game_id}/events")["events"] if e["type"] == "seat.left"]
    assert left and left[0]["payload"]["seat"] == 0 and left[0]["payload"]["reason"] == "resigned"
    assert not page.locator("#resign").is_visible()
    page.click("#rematch")
    page.wait_for_url(re.compile(r"/app/games/(?!" + re.escape(game_id) + ")"))
    page.wait_for_function("Number(document.querySelector('#game')?.dataset.gameVersion) > 0")
    assert page.get_attribute("#game", "data-seat") in ("0", "1")  # a rematch may seat people in another order
    rematch_id = page.url.rsplit("/", 1)[1]
    assert served.request("GET", f"/games/{rematch_id}/events")["events"][0]["payload"]["rematch_of"] == game_id
    assert "You play as Ada" in page.inner_text(".game-head")


def test_undo_shows_when_legal_offers_it_and_takes_the_move_back(served, browser):
    created = served.request("POST", "/games", {"game": "castle_panic", "seats": 2, "undo": True})
    game_id = created["id"]
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = context.new_page()
        seat_in_browser(page, served, game_id, "Ada")
        served.request("POST", f"/games/{game_id}/seats", {"name": "Ovid"})
        open_game(page, served, game_id)
        rng = random.Random(3)
        for _ in range(30):
            if page.locator("#undo").is_visible():
                break
            assert click_one(page, rng) or page.wait_for_timeout(50) is None
        else:
            raise AssertionError("undo never became possible")
        legal = page.evaluate("() => donjonApp.drawnState.legal")
        assert {"type": "undo", "args": {}} in legal
        assert "Undo your last move" in (page.text_content("#legal") or "")
        before = version_of(page)
        page.click("#undo")
        page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) > {before}")
        events = served.request("GET", f"/games/{game_id}/events")["events"]
        assert events[-1]["type"] == "move.undone" and events[-1]["payload"]["seat"] == 0
        assert "takes back the last move" in page.inner_text("#log")
    finally:
        context.close()


def spectator_count(page) -> int:
    return int(page.get_attribute("#spectators", "data-count") or -1)


def test_the_spectator_count_is_live_and_says_no_more_than_a_number(served, browser):
    game_id = person_against_bot(served, "carcassonne")
    contexts = [browser.new_context(viewport=DESKTOP) for _ in range(3)]
    try:
        player = contexts[0].new_page()
        frames: list[Any] = []
        player.on("websocket", lambda ws: ws.on("framereceived", lambda data: frames.append(data)))
        seat_in_browser(player, served, game_id, "Ada")
        open_game(player, served, game_id)
        assert spectator_count(player) == 0
        watchers = [context.new_page() for context in contexts[1:]]
        for watcher in watchers:
            open_game(watcher, served, game_id)
        player.wait_for_function("document.querySelector('#spectators').dataset.count === '2'", timeout=10000)
        assert served.request("GET", f"/games/{game_id}")["spectators"] == 2
        assert "2 spectators watching" in player.inner_text("#spectators")
        watchers[0].close()
        player.wait_for_function("document.querySelector('#spectators').dataset.count === '1'", timeout=10000)
        watchers[1].wait_for_function("document.querySelector('#spectators').dataset.count === '1'", timeout=10000)
        counts = [json.loads(f) for f in frames if isinstance(f, str) and '"spectators"' in f]
        counts = [f for f in counts if f.get("type") == "spectators"]
        assert counts and all(set(f) == {"type", "game", "count"} for f in counts), counts
    finally:
        for context in contexts:
            context.close()


def test_pages_opened_right_at_the_end_draw_the_end(slow_bots, browser):
    bots = {"0": "random", "1": "random"}
    for round_ in range(6):
        created = slow_bots.request("POST", "/games", {"game": "castle_panic", "seats": 2, "bots": bots, "bots_only": True})
        game_id = created["id"]
        deadline = time.monotonic() + 60
        while slow_bots.request("GET", f"/games/{game_id}")["status"] != "finished":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        final = slow_bots.request("GET", f"/games/{game_id}")["version"]
        contexts = [browser.new_context(viewport=DESKTOP) for _ in range(3)]
        try:
            pages = [context.new_page() for context in contexts]
            for page in pages:
                page.goto(f"{slow_bots.base}/app/games/{game_id}", wait_until="commit")
            for page in pages:
                page.wait_for_function(
                    f"Number(document.querySelector('#game')?.dataset.gameVersion) === {final}", timeout=15000
                )
                assert status_of(page) == "finished", round_
        finally:
            for context in contexts:
                context.close()
