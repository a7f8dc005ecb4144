"""Hidden information never reaches a viewer not entitled to it, on any frame or route.

Seeded random tiny games are played over real sockets; every frame a spectator (on another
node) and each seat receives is checked: another seat's card never appears in a ``dealt`` or
``drew`` event, a spectator's view has no hand, a seat's view has only its own hand, and the
seed appears nowhere before ``game.finished``.
"""

from __future__ import annotations

import json

import pytest

from service.fairness.draw_schemes import LegacyRandom
from tests.service.conftest import hello, kept_seed, receive_until, started_tiny
from tests.service.players import Player, play_all


def check_frames(frames, viewer, seed_hex):
    finished_seen = False
    for frame in frames:
        text = json.dumps(frame)
        finished_seen = finished_seen or any(e["type"] == "game.finished" for e in frame.get("events", []))
        if not finished_seen:
            assert seed_hex not in text, f"seed leaked to {viewer}: {frame}"
        for event in frame.get("events", []):
            if event["type"] in ("dealt", "drew") and event["payload"]["seat"] != viewer:
                assert "card" not in event["payload"], f"card leaked to {viewer}: {event}"
        view = frame.get("view")
        if view is not None:
            if viewer is None:
                assert "hand" not in view and view["legal"] == []
            elif frame["status"] == "active":
                assert "hand" in view
        assert "pile" not in (view or {}), "the pile's contents are never in a view"


@pytest.mark.parametrize("game_seed", [1, 2, 3, 4, 5])
async def test_no_frame_leaks_another_seats_cards_or_the_seed(make_node, game_seed):
    node_a, node_b = await make_node(), await make_node()
    game_id, tokens = await started_tiny(node_a)
    seed_hex = (await kept_seed(node_a.app, game_id)).hex()
    spectator, snapshot = await hello(node_b, game_id)
    players = []
    for seat, token in enumerate(tokens):
        ws, first = await hello(node_a if seat == 0 else node_b, game_id, token)
        players.append(Player(ws, first, LegacyRandom(game_seed * 10 + seat), f"s{seat}"))
    await play_all(players)
    _, spectator_frames = await receive_until(spectator, lambda f: f["status"] == "finished")
    check_frames([snapshot, *spectator_frames], None, seed_hex)
    for seat, player in enumerate(players):
        check_frames(player.frames, seat, seed_hex)
    # The HTTP routes keep the same line.
    events = (await (await node_b.get(f"/games/{game_id}/events")).json())["events"]
    check_frames([{"events": events}], None, "-")
    for at in range(1, events[-1]["version"]):
        state = await (await node_b.get(f"/games/{game_id}/state?at={at}")).json()
        check_frames([state], None, seed_hex)
    other = await (await node_a.get(f"/games/{game_id}/events", headers={"Authorization": f"Bearer {tokens[1]}"})).json()
    check_frames([{"events": other["events"]}], 1, "-")
