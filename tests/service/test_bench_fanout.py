"""The fan-out path that ``donjon bench`` measures: prepared websocket frames written to each
socket as they are, queued behind a socket that is not keeping up, and read back by the bench's
own spectator probe."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import WSCloseCode

from service.bench.service import _Spectator, _client_frame
from service.metrics import Metrics
from service.ws import DIRECT_WRITE_BUFFER, FRAMED, Connection, websocket_frame


class Transport:
    """What a Connection uses of an asyncio transport; ``buffered`` plays the kernel's backlog."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.buffered = 0
        self.closing = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def is_closing(self) -> bool:
        return self.closing


class WebSocket:
    def __init__(self) -> None:
        self.closed = False
        self.closes: list[int] = []

    async def close(self, *, code: int, message: bytes) -> None:
        self.closes.append(code)
        self.closed = True


class Drain:
    """Flow control: ``await drain()`` waits until ``resumed``, then raises ``error`` if one is set
    (the socket went away while the write waited)."""

    def __init__(self) -> None:
        self.resumed = asyncio.Event()
        self.resumed.set()
        self.calls = 0
        self.error: BaseException | None = None

    async def __call__(self) -> None:
        self.calls += 1
        await self.resumed.wait()
        if self.error is not None:
            raise self.error


def connection(outbox_limit: int = 10) -> tuple[Connection, Transport, WebSocket, Drain]:
    transport, ws, drain = Transport(), WebSocket(), Drain()
    conn = Connection(ws, FRAMED["json"], transport, drain, outbox_limit=outbox_limit, metrics=Metrics())  # type: ignore[arg-type]
    return conn, transport, ws, drain


@pytest.mark.parametrize(
    ("size", "header"),
    [(0, b"\x81\x00"), (125, b"\x81\x7d"), (126, b"\x81\x7e\x00\x7e"), (65535, b"\x81\x7e\xff\xff"),
     (65536, b"\x81\x7f\x00\x00\x00\x00\x00\x01\x00\x00")],
)
def test_a_prepared_frame_is_a_final_unmasked_frame_with_the_shortest_length_form(size, header):
    payload = b"x" * size
    assert websocket_frame(payload, binary=False) == header + payload
    assert websocket_frame(payload, binary=True)[0] == 0x82


def test_the_framed_codec_encodes_the_frame_and_decodes_plain_payloads():
    frame = {"type": "ack", "id": "c1", "version": 7, "duplicate": False}
    body = b'{"type":"ack","id":"c1","version":7,"duplicate":false}'
    assert FRAMED["json"].encode(frame) == bytes((0x81, len(body))) + body
    assert FRAMED["json"].decode(body) == frame
    assert FRAMED["msgpack"].binary and FRAMED["msgpack"].decode(FRAMED["msgpack"].encode(frame)[2:]) == frame


async def test_a_socket_that_keeps_up_gets_the_very_bytes_at_once():
    conn, transport, _, drain = connection()
    data = websocket_frame(b'{"type":"update"}', binary=False)
    conn.deliver(data)
    assert transport.written == [data] and transport.written[0] is data
    assert drain.calls == 0
    await conn.stop()


async def test_behind_a_full_buffer_frames_queue_and_go_out_in_order_as_flow_control_allows():
    conn, transport, _, drain = connection()
    transport.buffered = DIRECT_WRITE_BUFFER + 1
    drain.resumed.clear()
    conn.deliver(b"u1")
    conn.deliver(b"u2")
    assert transport.written == []
    await asyncio.sleep(0.01)
    assert transport.written == [b"u1"]  # the writer waits on flow control after each frame
    transport.buffered = 0
    conn.deliver(b"u3")  # the buffer has room, but u2 is still queued: u3 must not overtake it
    drain.resumed.set()
    await asyncio.sleep(0.01)
    assert transport.written == [b"u1", b"u2", b"u3"]
    conn.deliver(b"u4")
    assert transport.written[-1] == b"u4"  # the queue is empty again: written at once
    await conn.stop()


async def test_a_socket_reset_while_a_write_waits_ends_its_writer_quietly_and_writes_nothing_more():
    conn, transport, _, drain = connection()
    transport.buffered = DIRECT_WRITE_BUFFER + 1
    drain.resumed.clear()
    conn.deliver(b"u1")
    conn.deliver(b"u2")
    await asyncio.sleep(0.01)
    assert transport.written == [b"u1"]
    drain.error = ConnectionResetError("reset")
    drain.resumed.set()
    await asyncio.sleep(0.01)
    assert conn._writer.done() and conn._writer.exception() is None
    assert transport.written == [b"u1"]
    await conn.stop()


async def test_a_socket_too_slow_for_its_updates_is_closed_with_1013():
    conn, transport, ws, drain = connection(outbox_limit=2)
    transport.buffered = DIRECT_WRITE_BUFFER + 1
    drain.resumed.clear()
    for n in range(5):
        conn.deliver(f"u{n}".encode())
    await asyncio.sleep(0.01)
    assert ws.closes == [WSCloseCode.TRY_AGAIN_LATER]  # once, however many frames come after
    assert transport.written == []  # what was queued is dropped: the client reconnects with since
    await conn.stop()


async def test_updates_held_during_a_hello_follow_the_answer():
    conn, transport, _, _ = connection()
    conn.hold()
    conn.deliver(b"live")
    conn.send({"type": "snapshot"})
    conn.release()
    await asyncio.sleep(0.01)
    assert transport.written == [FRAMED["json"].encode({"type": "snapshot"}), b"live"]
    await conn.stop()


async def test_nothing_is_written_to_a_closing_socket():
    conn, transport, ws, _ = connection()
    ws.closed = True
    conn.deliver(b"u1")
    conn.send({"type": "ack"})
    await asyncio.sleep(0.01)
    assert transport.written == []
    await conn.stop()


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
