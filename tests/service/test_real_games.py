"""End to end with every real game the registry serves (games.default_engines()): scripted
clients play every version of every game (VARIANTS) to its end over the websocket using only ``legal`` (uniform
choice, seeded), a spectator watches from a second node, and every frame a viewer receives
holds exactly what the engine's ``redact``/``view`` allow that viewer and nothing else (no seed
before the end, no commands, no hashes). One more game per engine pits a human against the
game's own thinking bot in every other seat, and replay checks each bot move. Games are picked
up as they land in games/."""

from __future__ import annotations

import json

import pytest

import games
from games.base import Event
from projections.game import GameProjection
from service.edge.keys import SERVICE, STORE
from service.fairness.draw_schemes import LegacyRandom
from tests.service.conftest import TEST_VAULT, hello, kept_seed, receive_until
from tests.service.players import Player, play_all

ENGINES = games.default_engines()
DEFAULT_LIMITS: dict[str, int] = {}
"""Every game here is played at the default rate limit: the players wait for each ack before
they send (the protocol's recipe), and such a client is never limited (Player asserts it)."""


def plain(value):
    return json.loads(json.dumps(value))


def expected_events(engine, envelopes, viewer):
    out = []
    for envelope in envelopes:
        if "." in envelope.type:
            continue
        redacted = engine.redact(Event(envelope.type, envelope.payload), viewer)
        if redacted is not None:
            out.append((envelope.version, redacted.type, plain(redacted.payload)))
    return out


def received_engine_events(frames):
    return [
        (event["version"], event["type"], event["payload"])
        for frame in frames
        for event in frame.get("events", [])
        if "." not in event["type"]
    ]


VARIANTS = [
    ("carcassonne", 2, {}),
    ("carcassonne", 5, {"farmers": False}),
    ("carcassonne", 3, {"inns_cathedrals": True}),
    ("carcassonne", 6, {"inns_cathedrals": True}),
    ("castle", 2, {}),
    ("castle", 2, {"falcon": True}),
    ("castle", 2, {"falcon": True, "halt_at_gates": True}),
    ("castle_panic", 1, {}),
    ("castle_panic", 4, {"master_slayer": False}),
    ("castle_panic", 6, {"master_slayer": True}),
    ("castle_panic", 3, {"overlord": True}),
]
"""Every version the games' issues ask to see played over the websocket: each player count
class and expansion of Carcassonne, The Castle with and without the Falcon, and Castle Panic as
solitaire, pure co-op, Master Slayer and Overlord."""


def variant_id(variant):
    name, seats, options = variant
    return "-".join([name, str(seats), *sorted(key for key, value in options.items() if value)])


@pytest.mark.timeout(240)
@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
async def test_a_real_game_plays_to_its_end_with_legal_only_and_spectators_see_no_secret(make_client, variant):
    from service.fairness.replay import replay_game

    name, seats, options = variant
    engine = ENGINES[name]
    node_a = await make_client(engines=ENGINES, **DEFAULT_LIMITS)
    node_b = await make_client(engines=ENGINES, **DEFAULT_LIMITS)
    created = await node_a.post("/games", json={"game": name, "seats": seats, "options": options})
    assert created.status == 201, await created.text()
    game_id = (await created.json())["id"]
    tokens = []
    for seat in range(seats):
        response = await node_a.post(f"/games/{game_id}/seats", json={"name": f"bot{seat}"})
        tokens.append((await response.json())["token"])
    spectator, snapshot = await hello(node_b, game_id)
    players = []
    for seat, token in enumerate(tokens):
        ws, first = await hello(node_a, game_id, token)
        players.append(Player(ws, first, LegacyRandom(1000 + seat), f"{name}{seat}"))
    await play_all(players, max_commands=3000, timeout=10)

    final, spectator_frames = await receive_until(spectator, lambda f: f["status"] == "finished", timeout=30)
    store = node_a.app[STORE]
    envelopes = await node_a.app[SERVICE].events(game_id)
    seed_hex = (await kept_seed(node_a.app, game_id)).hex()
    projection = GameProjection.fold(game_id, engine, envelopes)
    assert projection.status.value == "finished" and engine.is_terminal(projection.state)

    frames_by_viewer = {None: [snapshot, *spectator_frames]}
    for seat, player in enumerate(players):
        frames_by_viewer[seat] = player.frames
    for viewer, frames in frames_by_viewer.items():
        first_version = frames[0]["version"]
        expected = [e for e in expected_events(engine, envelopes, viewer) if e[0] > first_version]
        assert received_engine_events(frames) == expected, f"viewer {viewer} got other events than redact allows"
        for frame in frames:
            if not any(e["type"] == "game.finished" for e in frame.get("events", [])):
                assert seed_hex not in json.dumps(frame), f"the seed reached viewer {viewer} before the end"
            for event in frame.get("events", []):
                assert set(event) == {"version", "type", "payload", "actor", "ts"}
    assert final["view"] == plain(dict(engine.view(projection.state, None), legal=[]))
    assert players[0].frames[-1]["view"] == plain(dict(engine.view(projection.state, 0), legal=[]))
    report = await replay_game(store, game_id, ENGINES, TEST_VAULT)
    assert (report.problems, report.status, report.seed_source) == ([], "finished", "revealed")


@pytest.mark.skipif("carcassonne" not in ENGINES, reason="carcassonne is not registered yet")
async def test_a_secret_option_stays_secret_until_the_end_and_is_committed_with_the_seed(make_client):
    from service.fairness import seeds
    from service.fairness.replay import replay_game

    order = ["V", "E", "U", "B", "D"]
    needle = json.dumps(order, separators=(",", ":"))
    node_a = await make_client(engines=ENGINES, **DEFAULT_LIMITS)
    node_b = await make_client(engines=ENGINES, **DEFAULT_LIMITS)
    created = await node_a.post("/games", json={"game": "carcassonne", "seats": 2, "options": {"tile_order": order}})
    game_id = (await created.json())["id"]
    tokens = [(await (await node_a.post(f"/games/{game_id}/seats", json={"name": n})).json())["token"] for n in "ab"]
    spectator, snapshot = await hello(node_b, game_id)
    players = []
    for seat, token in enumerate(tokens):
        ws, first = await hello(node_a, game_id, token)
        players.append(Player(ws, first, LegacyRandom(seat), f"c{seat}"))
    lobby = await (await node_b.get("/games?status=active&limit=200")).text()
    early_events = await (await node_b.get(f"/games/{game_id}/events")).json()
    await play_all(players, max_commands=100)
    _, spectator_frames = await receive_until(spectator, lambda f: f["status"] == "finished", timeout=30)

    created_event = early_events["events"][0]
    assert "tile_order" not in created_event["payload"]["options"]
    for text in (lobby, json.dumps(early_events)):
        assert needle not in text.replace(" ", "")
    frames = [snapshot, *spectator_frames, *(f for p in players for f in p.frames)]
    before_end = [f for f in frames if not any(e["type"] == "game.finished" for e in f.get("events", []))]
    assert all(needle not in json.dumps(f, separators=(",", ":")) for f in before_end)
    finished = next(e for e in spectator_frames[-1]["events"] if e["type"] == "game.finished")
    assert finished["payload"]["secret_options"] == {"tile_order": order}
    seed = bytes.fromhex(finished["payload"]["seed"])
    assert created_event["payload"]["seed_commitment"] == seeds.commitment(seed, {"tile_order": order})
    report = await replay_game(node_a.app[STORE], game_id, ENGINES, TEST_VAULT)
    assert report.problems == [] and report.seed_source == "revealed"


@pytest.mark.skipif(not ENGINES, reason="no real game is registered yet")
@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", sorted(ENGINES))
async def test_a_human_plays_a_real_game_against_its_bots_to_the_end_and_replay_checks_it(make_client, name):
    from service.bots import bots_for
    from service.fairness.replay import replay_game

    engine = ENGINES[name]
    bot = sorted(bots_for(engine))[0]  # greedy or heuristic: the bot that thinks
    node = await make_client(engines=ENGINES, **DEFAULT_LIMITS)
    seats = min(max(2, engine.min_seats), engine.max_seats)
    bots = {str(seat): bot for seat in range(1, seats)}
    created = await node.post("/games", json={"game": name, "seats": seats, "options": {}, "bots": bots})
    assert created.status == 201, await created.text()
    game_id = (await created.json())["id"]
    catalog = (await (await node.get("/games/catalog")).json())["games"]
    assert bot in next(entry for entry in catalog if entry["id"] == name)["bots"]
    seated = await (await node.post(f"/games/{game_id}/seats", json={"name": "human"})).json()
    assert (seated["seat"], seated["status"]) == (0, "active")
    ws, first = await hello(node, game_id, seated["token"])
    human = Player(ws, first, LegacyRandom(5), f"{name}-human")
    await human.play(max_commands=3000, timeout=10)

    store = node.app[STORE]
    envelopes = await node.app[SERVICE].events(game_id)
    bot_moves = [e for e in envelopes if e.command is not None and e.actor not in (None, 0)]
    assert bot_moves and all(e.command_id == f"bot:{e.actor}:{e.version - 1}" for e in bot_moves)
    report = await replay_game(store, game_id, ENGINES, TEST_VAULT)
    assert (report.problems, report.status) == ([], "finished")
