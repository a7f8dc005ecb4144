"""Bots filling seats, on real apps over the embedded Valkey: creation and its checks, a human
against a bot over the websocket, bot-only games, two nodes racing for the same bot move,
resuming after the driving node is gone, and replay checking every bot move."""

from __future__ import annotations

import asyncio

import pytest

import games
from events.due import due_key, shard_of
from games.carcassonne.bots import GREEDY as CARCASSONNE_GREEDY
from projections.game import GameProjection
from service.bots import bot_rng, bots_for
from service.edge.keys import METRICS, SERVICE, STORE
from service.fairness import seeds
from service.fairness.draw_schemes import LegacyRandom
from service.fairness.replay import replay_game
from service.play.game_service import GameService
from tests.service.conftest import ENGINES, TEST_VAULT, hello, kept_seed, receive_until, take_seat
from tests.service.players import Player
from tests.tinygame import FIRST, RANDOM, TINY, TinyBot, TinyEngine

FAST = {"ws_rate": 10_000, "ws_burst": 10_000}


async def create(client, bots, **body):
    response = await client.post("/games", json={"game": "tiny", "seats": 2, "bots": bots, **body})
    assert response.status == 201, await response.text()
    return (await response.json())["id"]


async def refusal(client, body):
    response = await client.post("/games", json={"game": "tiny", "seats": 2, **body})
    assert response.status == 400
    return (await response.json())["error"]


async def finished(client, game_id, timeout=20.0):
    """Poll until the game is over; its final body."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        body = await (await client.get(f"/games/{game_id}")).json()
        if body["status"] == "finished":
            return body
        await asyncio.sleep(0.02)
    raise AssertionError(f"game {game_id} did not finish in {timeout} s: {body}")


async def at_least(client, game_id, version, timeout=10.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        body = await (await client.get(f"/games/{game_id}")).json()
        if body["version"] >= version:
            return body
        await asyncio.sleep(0.02)
    raise AssertionError(f"game {game_id} stayed at version {body['version']}")


def bot_batches(envelopes, bot_seats):
    """``(version before, command id, command)`` of every batch a bot seat made."""
    return [
        (e.version - 1, e.command_id, e.command)
        for e in envelopes
        if e.command is not None and e.actor in bot_seats
    ]


# --- creating ------------------------------------------------------------------------------------


async def test_a_bot_seat_is_taken_at_creation_and_the_human_gets_the_free_seat(client):
    game_id = await create(client, {"1": "first"})
    body = await (await client.get(f"/games/{game_id}")).json()
    assert (body["status"], body["version"]) == ("open", 2)
    contribution = seeds.server_contribution(await kept_seed(client.app, game_id), 1)
    assert body["seats"] == [
        {"seat": 0, "name": None},
        {"seat": 1, "name": "first bot", "bot": "first", "seed_contribution": contribution},
    ]
    events = (await (await client.get(f"/games/{game_id}/events")).json())["events"]
    assert [(e["type"], e["actor"]) for e in events] == [("game.created", None), ("game.seat_taken", None)]
    assert events[1]["payload"] == {
        "seat": 1, "name": "first bot", "bot": "first", "seed_contribution": contribution,
        "seed_contribution_from": "server",
    }
    lobby = (await (await client.get("/games?status=open&limit=200")).json())["games"]
    entry = next(e for e in lobby if e["id"] == game_id)
    assert (entry["taken"], entry["names"], entry["bots"]) == (1, [None, "first bot"], [None, "first"])

    seated = await take_seat(client, game_id, "ann")
    assert (seated["seat"], seated["status"], seated["version"]) == (0, "active", 6)
    meta = await client.app[STORE].get_meta(game_id)
    assert meta["bots"] == {"1": "first"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"bots": {"2": "first"}}, "'bots': '2' is not a seat of this 2-seat game (0 to 1)"),
        ({"bots": {"-1": "first"}}, "'bots': '-1' is not a seat of this 2-seat game (0 to 1)"),
        ({"bots": {"one": "first"}}, "'bots': 'one' is not a seat of this 2-seat game (0 to 1)"),
        ({"bots": {"1": "clever"}}, "'bots': tiny has no bot 'clever' (its bots: first, random)"),
        ({"bots": {"1": 3}}, "'bots': tiny has no bot 3 (its bots: first, random)"),
        ({"bots": ["first"]}, "'bots' must be an object of seat -> bot name, got ['first']"),
        (
            {"bots": {"0": "first", "1": "random"}},
            "'bots' fills every seat: a game keeps at least one seat for a human unless 'bots_only' is true",
        ),
        (
            {"bots": {"0": "first", "1": "random"}, "bots_only": "yes"},
            "'bots_only' must be true or false, got 'yes'",
        ),
    ],
)
async def test_bad_bots_are_refused_with_bad_options_and_create_nothing(client, body, message):
    before = await client.app[STORE].list_games("open", 1000)
    assert await refusal(client, body) == {"code": "bad_options", "message": message}
    assert await client.app[STORE].list_games("open", 1000) == before


async def test_a_game_without_bots_refuses_a_bot_seat(make_client):
    class Botless(TinyEngine):
        bots = {}

    client = await make_client(engines={"tiny": Botless()})
    assert (await (await client.get("/games/catalog")).json())["games"][0]["bots"] == []
    error = await refusal(client, {"bots": {"1": "first"}})
    assert error["message"] == "'bots': tiny has no bot 'first' (it offers none)"


# --- which bots ----------------------------------------------------------------------------------


def test_every_game_offers_the_bots_of_its_bots_module_under_their_own_names():
    offered = {game: bots_for(engine) for game, engine in games.default_engines().items()}
    assert {game: sorted(bots) for game, bots in offered.items()} == {
        "carcassonne": ["greedy", "random"],
        "castle": ["greedy", "random"],
        "castle_panic": ["heuristic", "random"],
    }
    assert [(game, name) for game, bots in offered.items() for name, bot in bots.items() if bot.name != name] == []
    assert offered["carcassonne"]["greedy"] is CARCASSONNE_GREEDY


def test_an_engine_outside_the_registry_names_its_own_bot_objects():
    bots = bots_for(TINY)
    assert bots == {"random": RANDOM, "first": FIRST}
    assert bots["first"] is FIRST


# --- playing -------------------------------------------------------------------------------------


async def test_a_human_plays_a_bot_to_the_end_over_the_websocket_and_replay_checks_every_bot_move(make_client):
    client = await make_client(**FAST)
    game_id = await create(client, {"1": "random"})
    token = (await take_seat(client, game_id, "ann"))["token"]
    ws, first = await hello(client, game_id, token)
    assert (first["seat"], first["status"], first["seats"][1]["bot"]) == (0, "active", "random")
    human = Player(ws, first, LegacyRandom(7), "ann")
    await asyncio.wait_for(human.play(max_commands=50), 20)
    assert human.refused == []

    store = client.app[STORE]
    envelopes = await client.app[SERVICE].events(game_id)
    moves = bot_batches(envelopes, {1})
    assert moves, "the bot never moved"
    assert [command_id for _, command_id, _ in moves] == [f"bot:1:{before}" for before, _, _ in moves]
    # Every bot move is the one the bot chooses with its own rng on the state before it.
    seed = await kept_seed(client.app, game_id)
    for before, _, command in moves:
        projection = GameProjection.fold(game_id, TINY, envelopes[:before])
        assert command == TINY.bots["random"].choose(projection.state, 1, bot_rng(projection, seed, 1))
    # The human saw every bot move in its updates, as actor 1.
    seen = {event["version"] for frame in human.frames for event in frame.get("events", []) if event["actor"] == 1}
    assert {before + 1 for before, _, _ in moves} <= seen
    report = await replay_game(store, game_id, ENGINES, TEST_VAULT)
    assert (report.problems, report.status, report.seed_source) == ([], "finished", "revealed")
    human_moves = [e for e in envelopes if e.command is not None and e.actor == 0 and e.command["type"] != "take_seat"]
    assert report.batches_checked == 2 + len(moves) + len(human_moves)  # creation, the human's seat, moves


async def test_a_bot_in_seat_0_moves_first_as_soon_as_the_human_sits(client):
    game_id = await create(client, {"0": "first"})
    seated = await take_seat(client, game_id, "bob")
    assert (seated["seat"], seated["version"]) == (1, 6)
    body = await at_least(client, game_id, 7)
    assert body["view"]["turn"] == 1
    events = (await (await client.get(f"/games/{game_id}/events?from=7")).json())["events"]
    assert [(e["type"], e["actor"]) for e in events] == [("drew", 0)]  # "first" draws while it may


async def test_a_seat_that_leaves_no_bot_owing_is_unlisted_once_its_lobby_write_is_done(client):
    async def listed(game_id: str) -> bool:
        return await client.app[STORE].redis.zscore(due_key(shard_of(game_id)), game_id) is not None

    humans_only = await create(client, {})
    await take_seat(client, humans_only, "ann")
    assert not await listed(humans_only), "listed for its lobby write only, unlisted by the node that wrote it"
    bot_first = await create(client, {"0": "first"})
    await take_seat(client, bot_first, "bob")  # the start leaves the bot owing the first move
    assert await listed(bot_first), "a game whose bot owes a move stays listed for the sweep"


async def test_a_bots_only_game_plays_itself_to_the_end_and_replay_checks_its_creation(make_client):
    client = await make_client(bot_delay_ms=1)
    game_id = await create(client, {"0": "random", "1": "first"}, bots_only=True)
    body = await finished(client, game_id)
    assert [seat.get("bot") for seat in body["seats"]] == ["random", "first"]
    store = client.app[STORE]
    envelopes = await client.app[SERVICE].events(game_id)
    # One append held the creation, both bot seats and the setup.
    assert [e.type for e in envelopes[:6]] == [
        "game.created", "game.seat_taken", "game.seat_taken", "started", "dealt", "dealt"
    ]
    assert envelopes[0].command == {"type": "create_game", "args": {"bots": {"0": "random", "1": "first"}}}
    assert [e.command for e in envelopes[1:6]] == [None] * 5
    report = await replay_game(store, game_id, ENGINES, TEST_VAULT)
    assert report.problems == []
    moves = bot_batches(envelopes, {0, 1})
    assert report.batches_checked == 1 + len(moves)
    assert client.app[METRICS].bot_moves.value(game="tiny", bot="random") + client.app[METRICS].bot_moves.value(
        game="tiny", bot="first"
    ) == len(moves)


async def test_a_bots_only_game_leaves_the_event_loop_free_between_moves(make_client):
    client = await make_client()
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    running = asyncio.create_task(ticker())
    try:
        game_id = await create(client, {"0": "random", "1": "random"}, bots_only=True)
        await finished(client, game_id)
    finally:
        running.cancel()
    moves = len(bot_batches(await client.app[SERVICE].events(game_id), {0, 1}))
    assert ticks > moves


async def test_replay_flags_a_bot_move_its_bot_would_not_make(make_client):
    client = await make_client()
    game_id = await create(client, {"0": "first", "1": "first"}, bots_only=True)
    await finished(client, game_id)

    class Other(TinyEngine):
        bots = {"first": TinyBot("first", lambda legal, rng: legal[-1])}

    report = await replay_game(client.app[STORE], game_id, {"tiny": Other()})
    assert report.problems and all("bot 'first' of seat" in p and "the log has" in p for p in report.problems)


# --- several nodes -----------------------------------------------------------------------------


async def _bot_owes_and_nobody_drives(store, game_id_holder):
    """A game (human seat 1, bot ``first`` in seat 0) at version 6 where the bot owes the first
    move and the node that should make it died before doing so."""
    creator = GameService(store, ENGINES, bot_takeover=60)
    projection = await creator.create_game("tiny", {}, 2, {"0": "first"})
    await creator.take_seat(projection.game_id, "bob")
    await creator.close()  # its bot task never ran: the node "died" right after the append
    game_id_holder.append(projection.game_id)
    return projection.game_id


async def test_two_nodes_racing_for_the_same_bot_move_apply_it_once(client):
    store = client.app[STORE]
    game_id = await _bot_owes_and_nobody_drives(store, [])
    node_a = GameService(store, ENGINES, bot_takeover=60)
    node_b = GameService(store, ENGINES, bot_takeover=60)
    try:
        pa, pb = await node_a.load(game_id), await node_b.load(game_id)
        assert pa.version == pb.version == 6
        moved = await asyncio.gather(node_a.bot_scheduler.move(pa, 0, "first"), node_b.bot_scheduler.move(pb, 0, "first"))
        assert sorted(moved, key=str) == [7, None]
        envelopes = await client.app[SERVICE].events(game_id)
        assert [(e.version, e.type, e.command_id) for e in envelopes[6:]] == [(7, "drew", "bot:0:6")]
        lost = node_a.metrics.bot_races_lost.value() + node_b.metrics.bot_races_lost.value()
        assert lost == 1
    finally:
        await node_a.close()
        await node_b.close()


async def test_two_watching_nodes_that_both_take_over_never_double_a_bot_move(make_client):
    # A move is overdue after 1 ms but bots pause 10 ms between moves: while one node pauses,
    # the other node's reader sees the move and reaches for the next one, and they race.
    node_a = await make_client(bot_takeover_ms=1, bot_delay_ms=10, **FAST)
    node_b = await make_client(bot_takeover_ms=1, bot_delay_ms=10, **FAST)
    game_id = await create(node_a, {"0": "random", "1": "random"}, bots_only=True)
    watchers = [await hello(node, game_id) for node in (node_a, node_b)]
    for ws, first in watchers:
        if first["status"] != "finished":
            await receive_until(ws, lambda f: f["status"] == "finished", timeout=20)
    store = node_a.app[STORE]
    envelopes = await node_a.app[SERVICE].events(game_id)
    moves = bot_batches(envelopes, {0, 1})
    ids = [command_id for _, command_id, _ in moves]
    assert len(ids) == len(set(ids)) and ids == [f"bot:{e.actor}:{e.version - 1}" for e in envelopes if e.command and e.actor is not None]
    report = await replay_game(store, game_id, ENGINES, TEST_VAULT)
    assert report.problems == []
    made = sum(node.app[METRICS].bot_moves.value(game="tiny", bot="random") for node in (node_a, node_b))
    assert made == len(moves)


async def test_a_node_that_loads_a_game_with_an_overdue_bot_move_makes_it(make_client):
    node = await make_client(bot_takeover_ms=20)
    game_id = await _bot_owes_and_nobody_drives(node.app[STORE], [])
    body = await at_least(node, game_id, 7)  # the GET loads the game: the move is overdue soon
    assert body["view"]["turn"] == 1
    envelopes = await node.app[SERVICE].events(game_id)
    assert [(e.version, e.command_id) for e in envelopes[6:]] == [(7, "bot:0:6")]


async def test_the_node_that_appends_drives_and_a_watcher_leaves_it_alone(make_client):
    driver = await make_client(**FAST)
    watcher = await make_client(bot_takeover_ms=60_000, **FAST)
    game_id = await create(driver, {"1": "first"})
    token = (await take_seat(driver, game_id, "ann"))["token"]
    spectator, _ = await hello(watcher, game_id)
    ws, first = await hello(driver, game_id, token)
    await asyncio.wait_for(Player(ws, first, LegacyRandom(3), "ann").play(max_commands=50), 20)
    await receive_until(spectator, lambda f: f["status"] == "finished", timeout=10)
    assert watcher.app[METRICS].bot_moves.value(game="tiny", bot="first") == 0
    assert watcher.app[METRICS].bot_races_lost.value() == 0
    assert driver.app[METRICS].bot_moves.value(game="tiny", bot="first") >= 1


@pytest.mark.allow_error_logs
async def test_a_bot_that_fails_is_logged_and_its_game_left_as_it_is(make_client, caplog):
    def broken(legal, rng):
        raise RuntimeError("no idea")

    class Broken(TinyEngine):
        bots = {"broken": TinyBot("broken", broken), "first": FIRST}

    client = await make_client(engines={"tiny": Broken()})
    game_id = await create(client, {"0": "broken"})
    await take_seat(client, game_id, "bob")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while "bot.failed" not in caplog.text and loop.time() < deadline:
        await asyncio.sleep(0.01)
    assert "bot.failed" in caplog.text and "no idea" in caplog.text
    failed = next(r.getMessage() for r in caplog.records if "bot.failed" in r.getMessage())
    assert "Traceback" in failed and "in broken" in failed  # where the bot raised, not just what
    body = await (await client.get(f"/games/{game_id}")).json()
    assert (body["status"], body["version"]) == ("active", 6)
    assert client.app[SERVICE].bot_scheduler._failed == {game_id: 6}
