"""Spectators: a bot-only game followed live to its end, and nothing hidden in a spectator's page,
storage or frames (compared with what the seats' own pages receive at the same versions)."""

from __future__ import annotations

import json
import random
import time

from tests.web.conftest import click_one, open_game, seat_in_browser, status_of


def record_frames(page):
    """Every websocket frame the page receives, decoded (JSON text frames), in order."""
    frames = []

    def on_socket(ws):
        ws.on("framereceived", lambda data: frames.append(json.loads(data) if isinstance(data, str) else data))

    page.on("websocket", on_socket)
    return frames


def test_a_spectator_follows_a_bot_only_castle_panic_game_live_to_its_end(slow_bots, page, shots):
    frames = record_frames(page)
    bots = {"0": "heuristic", "1": "random", "2": "heuristic"}
    created = slow_bots.request("POST", "/games", {"game": "castle_panic", "seats": 3, "bots": bots, "bots_only": True})
    open_game(page, slow_bots, created["id"])
    assert page.get_attribute("#game", "data-seat") == "spectator"
    page.locator("#game").screenshot(path=str(shots / "watch-castle_panic-early.png"))
    page.wait_for_function("document.querySelector('#game').dataset.gameStatus === 'finished'", timeout=90000)
    final = slow_bots.request("GET", f"/games/{created['id']}")
    page.wait_for_function(f"Number(document.querySelector('#game').dataset.gameVersion) === {final['version']}")
    page.locator("#game").screenshot(path=str(shots / "watch-castle_panic-end.png"))
    updates = [f for f in frames if f.get("type") == "update"]
    assert len(updates) >= 5, "the page should have followed the game live, update by update"
    versions = [f["version"] for f in frames if f.get("type") in ("snapshot", "update")]
    assert versions == sorted(set(versions)) and versions[-1] == final["version"]
    assert page.locator("#legal [data-command], #board [data-command]").count() == 0
    log_versions = page.eval_on_selector_all("#log li", "items => items.map(li => Number(li.dataset.version))")
    spectator_events = slow_bots.request("GET", f"/games/{created['id']}/events")["events"]
    assert log_versions == [e["version"] for e in spectator_events]


def hidden_strings(view):
    """What a seat's own view holds that spectators must not see: its hidden hand, the Overlord's tokens."""
    secret = set(view.get("overlord_hand") or [])
    for hand in view.get("hands") or []:
        secret.update(hand or [])
    return secret


def test_nothing_hidden_reaches_a_spectator_page(served, browser, shots):
    created = served.request("POST", "/games", {"game": "castle_panic", "seats": 3, "bots": {"1": "random"},
                                                "options": {"overlord": True, "hidden_hands": True}})
    game_id = created["id"]
    contexts = [browser.new_context(viewport={"width": 1000, "height": 800}) for _ in range(3)]
    try:
        players, seat_frames = [], []
        for context, name in zip(contexts[:2], ("Ada", "Ovid"), strict=True):
            player = context.new_page()
            seat_in_browser(player, served, game_id, name)
            seat_frames.append(record_frames(player))
            players.append(player)
        spectator = contexts[2].new_page()
        requests = []
        spectator.on("request", lambda r: requests.append((r.url, r.headers.get("authorization"))))
        watched = record_frames(spectator)
        open_game(spectator, served, game_id)
        for player in players:
            open_game(player, served, game_id)
        assert [p.get_attribute("#game", "data-seat") for p in players] == ["0", "2"]
        rng, clicks, deadline = random.Random(5), 0, time.monotonic() + 40
        while clicks < 60 and status_of(spectator) != "finished" and time.monotonic() < deadline:
            moved = [click_one(p, rng) for p in players if status_of(p) != "finished"]
            clicks += sum(bool(m) for m in moved)
            if not any(moved):
                spectator.wait_for_timeout(30)
        assert clicks >= 10
        spectator.wait_for_timeout(300)
        spectator.locator("#game").screenshot(path=str(shots / "hidden-castle_panic-spectator.png"))
        seat_views = {}
        for frames in seat_frames:
            for frame in frames:
                if "view" in frame:
                    seat_views.setdefault(frame["version"], set()).update(hidden_strings(frame["view"]))
        # A hidden card or token may become public (played, or taken back from the discard pile,
        # which everyone sees): what counts as a leak is a secret the spectator sees while it is
        # still in a hidden hand and that no earlier spectator frame had shown.
        compared, public_so_far = 0, ""
        for frame in watched:
            if "view" not in frame:
                continue
            assert frame["view"].get("overlord_hand") is None and not any(frame["view"].get("hands") or [])
            text = json.dumps(frame)
            secret = {s for s in seat_views.get(frame["version"], set()) if f'"{s}"' not in public_so_far}
            leaked = sorted(s for s in secret if f'"{s}"' in text)
            assert not leaked, f"version {frame['version']}: a spectator frame holds {leaked}"
            compared += len(secret)
            public_so_far += text
        assert compared >= 50, "too few hidden cards and tokens compared"
        now_hidden = set()
        for player in players:
            now_hidden |= hidden_strings(player.evaluate("() => donjonApp.drawnState.view"))
        now_hidden = {s for s in now_hidden if f'"{s}"' not in public_so_far}
        dom = spectator.content()
        assert now_hidden and not [s for s in now_hidden if s in dom]
        storage = spectator.evaluate("() => JSON.stringify([{...localStorage}, {...sessionStorage}])")
        assert storage == "[{},{}]"
        assert all(auth is None for _, auth in requests), "a spectator page sent credentials"
        hellos = spectator.evaluate("() => donjonApp.conn.token ?? null")
        assert hellos is None
    finally:
        for context in contexts:
            context.close()


def lists_in(value):
    if isinstance(value, list):
        yield value
        for item in value:
            yield from lists_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from lists_in(item)


def values_named(value, key):
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key:
                yield item
            yield from values_named(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from values_named(item, key)


def test_a_carcassonne_tile_order_stays_secret_from_spectator_and_seat_until_the_end(served, browser):
    order = ["D", "E", "B", "K", "H", "E", "L", "J"]
    created = served.request("POST", "/games", {"game": "carcassonne", "seats": 2, "bots": {"1": "random"},
                                                "options": {"tile_order": order}})
    contexts = [browser.new_context() for _ in range(2)]
    try:
        spectator, player = (context.new_page() for context in contexts)
        watched, played = record_frames(spectator), record_frames(player)
        open_game(spectator, served, created["id"])
        seat_in_browser(player, served, created["id"])
        open_game(player, served, created["id"])
        rng, deadline = random.Random(2), time.monotonic() + 30
        while status_of(player) != "finished":
            assert time.monotonic() < deadline
            if not click_one(player, rng):
                player.wait_for_timeout(30)
        spectator.wait_for_function("document.querySelector('#game').dataset.gameStatus === 'finished'")
        futures = [order[i:] for i in range(len(order) - 1)]
        for frames in (watched, played):
            before_end = [f for f in frames if f.get("status") != "finished"]
            assert len(before_end) >= 3
            for frame in before_end:
                shown = [lst for lst in lists_in(frame) if lst in futures]
                assert not shown, f"version {frame.get('version')} shows the order"
                assert all(v is None for v in values_named(frame, "tile_order")), "a tile_order before the end"
        revealed = [e for f in watched for e in f.get("events", []) if e["type"] == "game.finished"]
        assert revealed and revealed[0]["payload"]["secret_options"] == {"tile_order": order}
    finally:
        for context in contexts:
            context.close()
