"""The whole websocket flow on real apps: play to the end with ``legal``, spectators on another
node, reconnect with ``since``, msgpack, duplicates, expected versions."""

from __future__ import annotations

import asyncio
import hashlib

import aiohttp
import msgpack
import pytest

from service.fairness.draw_schemes import LegacyRandom
from tests.service.conftest import (
    command,
    expect_reply,
    hello,
    receive,
    receive_until,
    started_tiny,
)
from tests.service.players import Player, play_all


def versions_of(frames):
    return [event["version"] for frame in frames if frame["type"] == "update" for event in frame["events"]]


async def test_two_seats_play_tiny_to_the_end_and_a_spectator_on_another_node_sees_it_all(make_node):
    node_a, node_b = await make_node(), await make_node()
    game_id, tokens = await started_tiny(node_a)
    spectator, snapshot = await hello(node_b, game_id)
    assert (snapshot["type"], snapshot["version"], snapshot["seat"]) == ("snapshot", 6, None)
    players = []
    for seat, token in enumerate(tokens):
        ws, first = await hello(node_a, game_id, token)
        assert (first["type"], first["seat"], first["status"]) == ("snapshot", seat, "active")
        players.append(Player(ws, first, LegacyRandom(seat), f"p{seat}"))
    await play_all(players)
    assert [p.refused for p in players] == [[], []]  # strictly alternating: nothing is ever stale

    final, seen = await receive_until(spectator, lambda f: f["status"] == "finished")
    assert versions_of(seen) == list(range(7, final["version"] + 1))  # every event, once, in order
    finished = seen[-1]["events"][-1]
    assert finished["type"] == "game.finished"
    commitment = (await (await node_b.get(f"/games/{game_id}/events?from=1&limit=1")).json())["events"][0]
    assert hashlib.sha256(bytes.fromhex(finished["payload"]["seed"])).hexdigest() == (
        commitment["payload"]["seed_commitment"]
    )
    assert finished["payload"]["summary"]["status"] == "finished"
    assert final["view"]["legal"] == []
    body = await (await node_a.get(f"/games/{game_id}")).json()
    assert (body["status"], body["version"]) == ("finished", final["version"])
    lobby = (await (await node_b.get("/games?status=finished&limit=200")).json())["games"]
    assert game_id in [entry["id"] for entry in lobby]
    # Every ack names the version of its last event, and the seat saw its own update for it.
    for player in players:
        seat_versions = versions_of(player.frames)
        for version in player.acked.values():
            assert version in seat_versions


async def test_a_command_on_node_a_reaches_a_spectator_on_node_b(make_node):
    node_a, node_b = await make_node(), await make_node()
    game_id, tokens = await started_tiny(node_a)
    watcher, _ = await hello(node_b, game_id)
    player, _ = await hello(node_a, game_id, tokens[0])
    await command(player, "c1", {"type": "draw", "args": {}})
    ack, _ = await expect_reply(player, "c1")
    assert ack == {"type": "ack", "id": "c1", "version": 7, "duplicate": False}
    update = await receive(watcher)
    assert (update["type"], update["version"]) == ("update", 7)
    assert update["events"] == [
        {"version": 7, "type": "drew", "payload": {"seat": 0}, "actor": 0, "ts": update["events"][0]["ts"]}
    ]
    assert update["view"]["hand_sizes"] == [2, 1] and update["view"]["turn"] == 1


async def test_reconnecting_with_since_delivers_what_was_missed_once(make_node):
    node_a, node_b = await make_node(), await make_node()
    game_id, tokens = await started_tiny(node_a)
    watcher, first = await hello(node_b, game_id)
    seen_before = first["version"]
    await watcher.close()
    p0, _ = await hello(node_a, game_id, tokens[0])
    p1, _ = await hello(node_a, game_id, tokens[1])
    await command(p0, "a", {"type": "draw", "args": {}})
    await expect_reply(p0, "a")
    await command(p1, "b", {"type": "draw", "args": {}})
    await expect_reply(p1, "b")
    watcher, catch_up = await hello(node_b, game_id, since=seen_before)
    assert catch_up["type"] == "update"
    assert [e["version"] for e in catch_up["events"]] == [7, 8]
    assert catch_up["version"] == 8 and catch_up["view"]["pile_size"] == 4
    await command(p0, "c", {"type": "draw", "args": {}})
    await expect_reply(p0, "c")
    live = await receive(watcher)
    assert [e["version"] for e in live["events"]] == [9]  # nothing twice
    # since == the present: an empty update, then live frames
    _again, up_to_date = await hello(node_b, game_id, since=9)
    assert (up_to_date["type"], up_to_date["events"], up_to_date["version"]) == ("update", [], 9)


async def test_a_resent_command_id_is_acked_again_with_the_earlier_version(client):
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[0])
    await command(ws, "same", {"type": "draw", "args": {}})
    first, _ = await expect_reply(ws, "same")
    await command(ws, "same", {"type": "draw", "args": {}})
    second, _ = await expect_reply(ws, "same")
    assert first == {"type": "ack", "id": "same", "version": 7, "duplicate": False}
    assert second == {"type": "ack", "id": "same", "version": 7, "duplicate": True}
    assert (await (await client.get(f"/games/{game_id}")).json())["version"] == 7


async def test_seats_cannot_collide_on_command_ids(client):
    game_id, tokens = await started_tiny(client)
    p0, _ = await hello(client, game_id, tokens[0])
    p1, _ = await hello(client, game_id, tokens[1])
    await command(p0, "1", {"type": "draw", "args": {}})
    assert (await expect_reply(p0, "1"))[0]["version"] == 7
    await command(p1, "1", {"type": "draw", "args": {}})
    reply, _ = await expect_reply(p1, "1")
    assert reply == {"type": "ack", "id": "1", "version": 8, "duplicate": False}


async def test_expected_version_guards_a_command(client):
    game_id, tokens = await started_tiny(client)
    ws, _ = await hello(client, game_id, tokens[0])
    await command(ws, "stale", {"type": "draw", "args": {}}, expected_version=5)
    error, _ = await expect_reply(ws, "stale")
    assert (error["type"], error["code"]) == ("error", "conflict")
    await command(ws, "fresh", {"type": "draw", "args": {}}, expected_version=6)
    ack, _ = await expect_reply(ws, "fresh")
    assert (ack["type"], ack["version"]) == ("ack", 7)


async def test_msgpack_subprotocol_carries_the_same_frames_binary(client):
    game_id, tokens = await started_tiny(client)
    ws = await client.ws_connect(f"/games/{game_id}/ws", protocols=("donjon.msgpack",))
    assert ws.protocol == "donjon.msgpack"
    await ws.send_bytes(msgpack.packb({"type": "hello", "token": tokens[0]}))
    message = await ws.receive()
    assert message.type == aiohttp.WSMsgType.BINARY
    snapshot = msgpack.unpackb(message.data)
    assert (snapshot["type"], snapshot["seat"], snapshot["version"]) == ("snapshot", 0, 6)
    await ws.send_bytes(msgpack.packb({"type": "command", "id": "m1", "command": {"type": "draw", "args": {}}}))
    ack, _frames = await expect_reply(ws, "m1")
    assert ack["version"] == 7
    await ws.send_str('{"type": "hello"}')
    error, _ = await receive_until(ws, lambda f: f["type"] == "error")
    assert error["code"] == "bad_json"


async def test_the_two_node_flow_runs_the_same_on_each_store_server(aiohttp_client, redis_url):
    """Against the embedded Valkey, the 3-master cluster and, when DONJON_TEST_REDIS_URL is set, a real Redis 7."""
    from events.store import cmds_key, events_key, lobby_keys, meta_key
    from service.edge.keys import STORE
    from service.run.app import create_app
    from tests.service.conftest import ENGINES, settings_for

    node_a = await aiohttp_client(create_app(settings_for(redis_url), engines=ENGINES))
    node_b = await aiohttp_client(create_app(settings_for(redis_url), engines=ENGINES))
    game_id, tokens = await started_tiny(node_a)
    try:
        watcher, _ = await hello(node_b, game_id)
        players = []
        for seat, token in enumerate(tokens):
            ws, first = await hello(node_a if seat == 0 else node_b, game_id, token)
            players.append(Player(ws, first, LegacyRandom(40 + seat), f"x{seat}"))
        await play_all(players)
        final, seen = await receive_until(watcher, lambda f: f["status"] == "finished")
        assert versions_of(seen) == list(range(7, final["version"] + 1))
    finally:
        redis = node_a.app[STORE].redis
        for key in (events_key(game_id), meta_key(game_id), cmds_key(game_id)):
            await redis.delete(key)
        for status in ("open", "active", "finished"):
            for key in lobby_keys(status):
                await redis.zrem(key, game_id)


@pytest.mark.allow_error_logs
async def test_a_stream_the_node_cannot_fold_closes_its_sockets_and_the_node_keeps_serving(client, caplog):
    from events.envelope import NewEvent
    from service.edge.keys import STORE

    broken_id, _ = await started_tiny(client)
    healthy_id, tokens = await started_tiny(client)
    watcher, _ = await hello(client, broken_id)
    player, _ = await hello(client, healthy_id, tokens[0])
    store = client.app[STORE]
    await store.append(
        broken_id, [NewEvent("teleported", {})], expected_version=6, command_id=None, actor=None, ts=1,
        link=(await store.head(broken_id))[1],
    )
    message = await watcher.receive(timeout=5)
    assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    assert watcher.close_code == 1011
    failed = next(r.getMessage() for r in caplog.records if "reader.publish_failed" in r.getMessage())
    assert "Traceback" in failed and "teleported" in failed
    await command(player, "still", {"type": "draw", "args": {}})
    ack, _ = await expect_reply(player, "still")
    assert ack["type"] == "ack"


async def test_the_node_that_appended_pushes_the_projection_it_folded_not_a_second_fold(client, monkeypatch):
    """The append notice often comes before the append's own answer (here always: the answer is
    held back); the reader waits for that answer and pushes the projection the command path
    folded, instead of folding the same events again."""
    from projections.live import LiveGame
    from service.edge.keys import STORE

    store = client.app[STORE]
    append = store.append

    async def slow_append(*args, **kwargs):
        result = await append(*args, **kwargs)
        await asyncio.sleep(0.02)  # the notice is read meanwhile
        return result

    monkeypatch.setattr(store, "append", slow_append)
    reused: list[bool] = []
    after = LiveGame._after

    def spy(self, fresh, folded):
        projection = after(self, fresh, folded)
        reused.append(projection is folded)
        return projection

    monkeypatch.setattr(LiveGame, "_after", spy)
    game_id, tokens = await started_tiny(client)
    players = []
    for seat, token in enumerate(tokens):
        ws, first = await hello(client, game_id, token)
        players.append(Player(ws, first, LegacyRandom(seat), f"p{seat}"))
    await play_all(players)
    assert len(reused) >= 4 and all(reused)


async def test_events_held_for_the_appending_node_are_pushed_when_its_append_fails_after_landing(client, monkeypatch):
    """The append landed but its answer was lost (the store stopped answering): the command is
    refused with ``store_unavailable``, and the events the reader held for that append still
    reach every socket, folded by the reader itself."""
    from events.errors import StoreUnavailable
    from service.edge.keys import STORE

    store = client.app[STORE]
    append = store.append

    async def lost_answer(*args, **kwargs):
        await append(*args, **kwargs)
        await asyncio.sleep(0.02)  # the notice is read meanwhile, and held for this append
        raise StoreUnavailable("the answer was lost")

    game_id, tokens = await started_tiny(client)
    sockets = [(await hello(client, game_id, token))[0] for token in tokens]
    monkeypatch.setattr(store, "append", lost_answer)
    await command(sockets[0], "c1", {"type": "draw", "args": {}})
    reply, before = await expect_reply(sockets[0], "c1")
    assert reply["code"] == "store_unavailable"
    assert [frame["version"] for frame in before if frame["type"] == "update"] == [7]  # pushed before the answer
    update, _ = await receive_until(sockets[1], lambda f: f["type"] == "update")
    assert update["version"] == 7


async def test_the_appending_node_pushes_its_own_append_as_it_lands_and_its_notice_costs_no_read(client, monkeypatch):
    """With no spectator on the node, the node pushes its own append from the store's answer
    (the reader never folds or reads it again): the sender's update is in its socket by the ack,
    and the notice that follows carries nothing newer, so no read of the stream is made for it."""
    from service.edge.keys import METRICS, NODE

    game_id, tokens = await started_tiny(client)
    sockets = [(await hello(client, game_id, token))[0] for token in tokens]
    node, metrics = client.app[NODE], client.app[METRICS]
    pushed = []
    appended = node.appended

    def spy(append, after):
        before = node.games[game_id].version if game_id in node.games else None
        appended(append, after)
        pushed.append((before, node.games[game_id].version))

    monkeypatch.setattr(node, "appended", spy)
    # The subscription's confirmation comes when it comes and is read for on its own (the gap
    # between the load and the subscription): waited for, so that only the command's notice counts.
    for _ in range(500):  # a fresh node, this one game: its first notice is the confirmation
        if node.feed.subscribed_on(game_id) is not None and node.feed.notices >= 1:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    gap_reads = metrics.feed_gap_reads.value()
    await command(sockets[0], "c1", {"type": "draw", "args": {}})
    ack, frames = await expect_reply(sockets[0], "c1")
    assert ack["type"] == "ack"
    assert pushed == [(ack["version"] - 1, ack["version"])]  # pushed as it landed, before the ack
    assert [frame["version"] for frame in frames if frame["type"] == "update"] == [ack["version"]]
    await asyncio.sleep(0.2)  # the notice comes and goes
    assert metrics.feed_gap_reads.value() == gap_reads
