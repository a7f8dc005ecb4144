"""A socket's :class:`service.edge.outbox.Connection` and the prepared frames it writes: whole websocket
frames written to the socket's transport as they are while it keeps up, queued in order behind
flow control when it does not, held back while a hello is answered, and a socket too slow for its
updates closed with 1013."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import WSCloseCode

from service.edge.outbox import DIRECT_WRITE_BUFFER, FRAMED, Connection, websocket_frame
from service.edge.spectator_batch import SpectatorBatch
from service.ops.metrics import Metrics


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


def connection(
    outbox_limit: int = 10, *, stalled: bool = False, batch: SpectatorBatch | None = None,
) -> tuple[Connection, Transport, WebSocket, Drain]:
    """A Connection over fakes; ``stalled``: its socket is not keeping up (the transport's buffer
    is full) and flow control holds its writer until ``drain.resumed`` is set."""
    transport, ws, drain = Transport(), WebSocket(), Drain()
    conn = Connection(
        ws, FRAMED["json"], transport, drain, outbox_limit=outbox_limit, metrics=Metrics(),  # type: ignore[arg-type]
        spectator_batch=batch,
    )
    if stalled:
        transport.buffered = DIRECT_WRITE_BUFFER + 1
        drain.resumed.clear()
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
    conn, transport, _, drain = connection(stalled=True)
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
    conn, transport, _, drain = connection(stalled=True)
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
    conn, transport, ws, _ = connection(outbox_limit=2, stalled=True)
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


async def test_frames_that_come_while_the_sockets_command_runs_leave_with_its_answer_in_one_write():
    conn, transport, _, _ = connection()
    conn.cork()
    conn.deliver(b"u1")
    conn.deliver(b"u2")
    assert transport.written == []  # kept back while the command runs
    conn.uncork(b"ack")
    assert transport.written == [b"u1u2ack"]
    conn.deliver(b"u3")
    assert transport.written[-1] == b"u3"  # uncorked: written at once again
    await conn.stop()


async def test_a_command_that_fails_writes_what_was_kept_back_before_its_error():
    conn, transport, _, _ = connection()
    conn.cork()
    conn.deliver(b"u1")
    conn.uncork()
    conn.send({"type": "error"})
    assert transport.written == [b"u1", FRAMED["json"].encode({"type": "error"})]
    await conn.stop()


async def test_what_a_command_kept_back_queues_in_order_behind_a_full_buffer():
    conn, transport, _, drain = connection(stalled=True)
    conn.cork()
    conn.deliver(b"u1")
    conn.uncork(b"ack")
    assert transport.written == []
    drain.resumed.set()
    await asyncio.sleep(0.01)
    assert transport.written == [b"u1ack"]
    await conn.stop()


# --- spectators' frames batched (service.edge.spectator_batch) -------------------------------------

WINDOW = 0.05


async def test_a_spectator_writes_at_once_after_quiet_and_batches_what_follows_within_the_window():
    conn, transport, _, _ = connection(batch=SpectatorBatch(WINDOW))
    conn.deliver(b"u1")
    assert transport.written == [b"u1"]  # a quiet socket loses no time
    conn.deliver(b"u2")
    conn.deliver(b"u3")
    assert transport.written == [b"u1"]
    await asyncio.sleep(WINDOW * 1.6)
    assert transport.written == [b"u1", b"u2u3"]  # the very frames, in order, in one write
    assert conn.metrics.ws_frames_out.value() == 3
    await asyncio.sleep(WINDOW * 1.2)
    conn.deliver(b"u4")
    assert transport.written[-1] == b"u4"  # quiet again for a window: at once
    await conn.stop()


async def test_every_spectator_waiting_is_written_by_the_one_timer_each_in_one_write():
    batch = SpectatorBatch(WINDOW)
    sockets = [connection(batch=batch) for _ in range(3)]
    for conn, _, _, _ in sockets:
        conn.deliver(b"a")
        conn.deliver(b"b")
        conn.deliver(b"c")
    assert [transport.written for _, transport, _, _ in sockets] == [[b"a"]] * 3
    await asyncio.sleep(WINDOW * 1.6)
    assert [transport.written for _, transport, _, _ in sockets] == [[b"a", b"bc"]] * 3
    for conn, _, _, _ in sockets:
        await conn.stop()


async def test_a_reply_to_a_spectator_never_overtakes_its_waiting_updates():
    conn, transport, _, _ = connection(batch=SpectatorBatch(WINDOW))
    conn.deliver(b"u1")
    conn.deliver(b"u2")
    conn.send_encoded(b"error")
    assert transport.written == [b"u1", b"u2", b"error"]
    await asyncio.sleep(WINDOW * 1.6)
    assert transport.written == [b"u1", b"u2", b"error"]  # the timer finds nothing left to write
    await conn.stop()


async def test_a_deliberate_close_first_writes_the_waiting_updates():
    conn, transport, _, _ = connection(batch=SpectatorBatch(WINDOW))
    conn.deliver(b"u1")
    conn.deliver(b"u2")
    await conn.flush(0.1)
    assert transport.written == [b"u1", b"u2"]
    await conn.stop()


async def test_seats_are_never_batched_and_a_stopped_spectator_writes_nothing_more():
    batch = SpectatorBatch(WINDOW)
    seat, seat_transport, _, _ = connection(batch=batch)
    seat.viewer = 0
    for frame in (b"s1", b"s2", b"s3"):
        seat.deliver(frame)
    assert seat_transport.written == [b"s1", b"s2", b"s3"]
    spectator, transport, _, _ = connection(batch=batch)
    spectator.deliver(b"u1")
    spectator.deliver(b"u2")
    await spectator.stop()
    await asyncio.sleep(WINDOW * 1.6)
    assert transport.written == [b"u1"]
    await seat.stop()


async def test_batched_updates_behind_a_full_buffer_queue_in_order():
    conn, transport, _, drain = connection(batch=SpectatorBatch(WINDOW))
    conn.deliver(b"u1")
    conn.deliver(b"u2")
    transport.buffered = DIRECT_WRITE_BUFFER + 1
    drain.resumed.clear()
    await asyncio.sleep(WINDOW * 1.6)
    assert transport.written == [b"u1", b"u2"]  # queued, then written by the writer task, which waits on flow control
    transport.buffered = 0
    conn.deliver(b"u3")
    drain.resumed.set()
    await asyncio.sleep(WINDOW * 1.6)
    assert transport.written == [b"u1", b"u2", b"u3"]  # u3 waited for u2's flow control, then its window
    await conn.stop()
