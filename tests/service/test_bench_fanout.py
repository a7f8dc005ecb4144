"""The fan-out path that ``donjon bench`` measures, beyond the socket's own writes (those are in
``test_ws_connection.py``): the bench's spectator probe reading back what the server frames, and the
node's stream reader that feeds every subscriber."""

from __future__ import annotations

import asyncio
import json

from service.bench.service import _client_frame, _Spectator
from service.metrics import Metrics
from service.ws import FRAMED


def test_the_bench_spectator_reads_what_the_server_frames():
    frames = [{"type": "update", "game": "g", "version": v, "view": {"x": "y" * 200 * v}} for v in (4, 5)]
    spectator = _Spectator.__new__(_Spectator)
    spectator.buffer = bytearray(b"".join(FRAMED["json"].encode(frame) for frame in frames) + b"\x81\x05ab")
    found = spectator.frames()
    assert [(opcode, json.loads(payload)["version"]) for opcode, payload in found] == [(1, 4), (1, 5)]
    assert spectator.buffer == b"\x81\x05ab"  # an incomplete frame waits for the rest
    assert _client_frame(b"hi") == b"\x81\x82\x00\x00\x00\x00hi"


# --- the node's reader -----------------------------------------------------------------------


class LosingStore:
    """A store whose first blocking read loses its cancel, as a redis-py read can on Python 3.11
    (``asyncio.wait_for`` swallows a cancel that lands as the command's send completes)."""

    def __init__(self) -> None:
        self.reads: list[tuple[dict[str, int], asyncio.Future]] = []

    async def read_many(self, positions, block_ms):
        answer = asyncio.get_running_loop().create_future()
        self.reads.append((dict(positions), answer))
        try:
            return await asyncio.shield(answer)
        except asyncio.CancelledError:
            if len(self.reads) == 1:
                return await answer  # the cancel is lost: the read runs on to its end
            raise


class Service:
    def __init__(self) -> None:
        self.offered: list[tuple[str, int]] = []

    def offer(self, projection) -> None:
        self.offered.append((projection.game_id, projection.version))

    def watch_bots(self, projection) -> None:
        pass


class Socket:
    def __init__(self) -> None:
        self.viewer = None
        self.codec = FRAMED["json"]
        self.received: list[int] = []

    def deliver(self, data: bytes) -> None:
        offset = {126: 4, 127: 10}.get(data[1], 2)
        self.received.append(json.loads(data[offset:])["version"])


async def settle(condition, timeout: float = 2.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.002)


async def test_a_read_whose_cancel_is_lost_neither_holds_up_a_newly_watched_game_nor_loses_its_events():
    from projections.game import GameProjection
    from projections.live import LiveGame
    from service.node import Node
    from tests.projections.helpers import opening
    from tests.tinygame import TINY

    store, service = LosingStore(), Service()
    node = Node(store, service, Metrics(), block_ms=60_000)
    a, b = (LiveGame(GameProjection.fold(name, TINY, opening(name)[:4])) for name in ("a", "b"))
    watching_a, watching_b = Socket(), Socket()
    node.start()
    try:
        node.subscribe(a, watching_a)
        await settle(lambda: len(store.reads) == 1)
        node.subscribe(b, watching_b)  # the read on {a} is cancelled, and loses the cancel
        await settle(lambda: len(store.reads) == 2)
        assert store.reads[1][0] == {"a": 4, "b": 4}
        store.reads[1][1].set_result({"b": opening("b")[4:5]})
        await settle(lambda: watching_b.received == [5])  # not held up by the lost read's 60 s
        store.reads[0][1].set_result({"a": opening("a")[4:6]})  # the lost read ends after all
        await settle(lambda: watching_a.received == [6])
        assert a.version == 6 and ("a", 6) in service.offered
    finally:
        await node.stop()
