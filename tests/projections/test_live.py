"""Live fan-out: one encode per visibility class and codec, the same bytes to every socket."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.game import GameProjection
from projections.live import LiveGame, snapshot_frame, update_frame
from service.fairness.draw_schemes import LegacyRandom
from tests.projections.helpers import opening, random_game
from tests.tinygame import TINY


class Codec:
    def __init__(self, name):
        self.name = name
        self.calls = 0

    def encode(self, frame):
        self.calls += 1
        return json.dumps(frame, sort_keys=True) + ("" if self.name == "json" else " ")


class Socket:
    def __init__(self, viewer, codec):
        self.viewer = viewer
        self.codec = codec
        self.received = []

    def deliver(self, data):
        self.received.append(data)


def test_each_class_is_encoded_once_however_many_sockets_watch():
    envs = opening()
    live = LiveGame(GameProjection.fold("g1", TINY, envs[:3]))
    json_codec, msgpack_codec = Codec("json"), Codec("msgpack")
    spectators = [Socket(None, json_codec) for _ in range(100)] + [Socket(None, msgpack_codec) for _ in range(5)]
    seats = [Socket(0, json_codec), Socket(0, json_codec), Socket(1, json_codec)]
    for sock in spectators + seats:
        live.add(sock)
    delivered = live.publish(envs)
    assert delivered == 108
    assert live.encodes == 4  # spectators x 2 codecs, seat 0, seat 1
    assert live.version == 6
    assert len({id(s.received[0]) for s in spectators[:100]}) == 1  # the very same object
    frame = json.loads(seats[0].received[0])
    assert (frame["type"], frame["version"], [e["version"] for e in frame["events"]]) == ("update", 6, [4, 5, 6])
    assert frame["view"]["legal"] == [{"type": "draw", "args": {}}] + [
        {"type": "play", "args": {"card": card}} for card in frame["view"]["hand"]
    ]


def test_publish_ignores_what_was_already_pushed_and_discard_stops_delivery():
    envs = opening()
    live = LiveGame(GameProjection.fold("g1", TINY, envs))
    sock = Socket(None, Codec("json"))
    live.add(sock)
    assert live.publish(envs) == 0
    live.discard(sock)
    assert len(live) == 0


def test_a_socket_that_leaves_stops_receiving_and_its_class_keeps_the_shared_bytes():
    envs = opening()
    live = LiveGame(GameProjection.fold("g1", TINY, envs[:3]))
    json_codec, msgpack_codec = Codec("json"), Codec("msgpack")
    first, second, binary = Socket(None, json_codec), Socket(None, json_codec), Socket(None, msgpack_codec)
    for sock in (first, second, binary):
        live.add(sock)
    live.discard(first)
    live.discard(first)  # twice is harmless
    assert live.publish(envs[:4]) == 2
    assert (len(first.received), len(second.received), len(binary.received)) == (0, 1, 1)
    assert live.encodes == 2
    live.discard(second)
    live.discard(binary)
    assert len(live) == 0 and live.subscribers() == []
    assert live.publish(envs) == 0 and live.encodes == 2 and live.version == 6  # folded, sent to nobody


def test_snapshot_frame_shape():
    projection = GameProjection.fold("g1", TINY, opening())
    frame = snapshot_frame(projection, 1)
    assert set(frame) == {"type", "game", "version", "status", "seat", "seats", "view"}
    assert (frame["type"], frame["seat"], frame["status"], frame["version"]) == ("snapshot", 1, "active", 6)


@settings(deadline=None, max_examples=25)
@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=1, max_value=4))
def test_pushing_a_game_in_any_chunks_gives_each_viewer_every_visible_event_once(seed, chunk):
    envs = random_game(LegacyRandom(seed))
    live = LiveGame(GameProjection.fold("g1", TINY, envs[:1]))
    sockets = {viewer: Socket(viewer, Codec("json")) for viewer in (None, 0, 1)}
    for sock in sockets.values():
        live.add(sock)
    for start in range(1, len(envs), chunk):
        live.publish(envs[start : start + chunk])
    for viewer, sock in sockets.items():
        frames = [json.loads(data) for data in sock.received]
        versions = [e["version"] for f in frames for e in f["events"]]
        assert versions == list(range(2, len(envs) + 1))
        assert frames[-1]["status"] == "finished"
        for frame in frames:
            for event in frame["events"]:
                if event["type"] in ("dealt", "drew") and event["payload"]["seat"] != viewer:
                    assert "card" not in event["payload"]


class SplitTiny(type(TINY)):  # type: ignore[misc]
    """The tiny game with its view split (``games.base.SplitViews``), counting public parts built."""

    def __init__(self):
        self.public_built = 0

    def public_view(self, state):
        self.public_built += 1
        return {key: value for key, value in TINY.view(state, None).items() if key not in ("legal", "hand")}

    def private_view(self, state, viewer):
        view = TINY.view(state, viewer)
        return {key: view[key] for key in ("legal", "hand") if key in view}


def test_a_split_view_is_built_once_per_publish_for_every_class_and_frames_keep_each_viewers_own():
    engine = SplitTiny()
    envs = opening()
    live = LiveGame(GameProjection.fold("g1", engine, envs[:3]))
    reference = LiveGame(GameProjection.fold("g1", TINY, envs[:3]))
    codec = Codec("json")
    sockets: dict[LiveGame, list[Socket]] = {game: [Socket(viewer, codec) for viewer in (0, 1, None)]
                                             for game in (live, reference)}
    for game, socks in sockets.items():
        for sock in socks:
            game.add(sock)
    live.publish(envs)
    reference.publish(envs)
    assert engine.public_built == 1  # three classes, one public part
    received = {sock.viewer: json.loads(sock.received[0]) for sock in sockets[live]}
    expected = {sock.viewer: json.loads(sock.received[0]) for sock in sockets[reference]}
    assert received == expected  # the same frames as the engine's whole view gives
    assert "hand" not in received[None]["view"]
    assert [received[seat]["view"]["hand"] for seat in (0, 1)] == [sorted(hand) for hand in live.projection.state.hands]


def test_frames_spliced_from_the_shared_part_decode_to_the_whole_frames_in_both_wire_codecs():
    """The service's codecs encode the shared part once and splice it into each class's frame:
    every socket still gets exactly the frame the engine's whole view makes."""
    from service.edge.outbox import FRAMED

    engine = SplitTiny()
    envs = opening()
    for name in ("json", "msgpack"):
        codec = FRAMED[name]
        live = LiveGame(GameProjection.fold("g1", engine, envs[:3]))
        socks = [Socket(viewer, codec) for viewer in (0, 1, None)]
        for sock in socks:
            live.add(sock)
        for envelope in envs[3:]:
            live.publish([envelope])
        reference = GameProjection.fold("g1", TINY, envs[:3])
        for step, envelope in enumerate(envs[3:]):
            reference = reference.apply_all([envelope])
            for sock in socks:
                payload = sock.received[step]
                frame = codec.decode(payload[2:] if payload[1] < 126 else payload[4:])
                assert frame == update_frame(reference, [envelope], sock.viewer)
