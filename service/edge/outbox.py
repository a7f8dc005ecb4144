"""One socket's writes: whole websocket frames, prepared once, written in order.

Everything sent to a client (the hello answer, acks, errors and the live updates the node's
stream reader fans out) is a whole websocket frame prepared once (:class:`FramedCodec`; an
update once per visibility class) and written in order: straight to the socket's transport while
the socket keeps up, else through the connection's outbox by its own writer task, which waits on
flow control. While a socket's command runs, the frames that come for it (its own update, pushed
as the append lands, and the other seats' updates) are kept back and written with the ack in one
``transport.write``: one ``send`` system call, the largest single cost of a trivial command,
instead of one per frame. A spectator's updates that come close together leave together
(:mod:`service.edge.spectator_batch`). While a ``hello`` is being answered the live updates are
held back, so the answer is always the first frame and nothing is sent twice or skipped after it.

The service owns its server frames outright: :func:`websocket_frame` builds them (RFC 6455 5.2:
final, unmasked, uncompressed), and they are written on the request's transport
(``BaseRequest.transport``) with the response's writer's ``drain``, both public aiohttp API.
aiohttp keeps the handshake, the reading, ping/pong and the close; it too writes each frame of
its own in one call, so the two never interleave within a frame. aiohttp's ``send_bytes`` would
frame the same payload again for every socket and await per socket, which the fan-out avoids.
A socket too slow to take its updates (``DONJON_WS_OUTBOX`` frames queued) is closed with 1013.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import struct
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import WSCloseCode, web

from service.edge.spectator_batch import SpectatorBatch, take_waiting
from service.edge.wire import JSON, MSGPACK, Codec
from service.ops.metrics import Metrics

__all__ = ["DIRECT_WRITE_BUFFER", "FRAMED", "Connection", "FramedCodec", "websocket_frame"]

DIRECT_WRITE_BUFFER = 16 * 1024
"""Bytes already buffered in a socket's transport above which frames queue instead: the socket
is not keeping up, so its frames go through its writer task, which waits on flow control."""


def websocket_frame(payload: bytes, binary: bool) -> bytes:
    """One whole server frame (RFC 6455 5.2): final, unmasked, uncompressed; its bytes are the
    same for every socket."""
    first = 0x82 if binary else 0x81
    size = len(payload)
    if size < 126:
        header = bytes((first, size))
    elif size < 1 << 16:
        header = struct.pack("!BBH", first, 126, size)
    else:
        header = struct.pack("!BBQ", first, 127, size)
    return header + payload


class FramedCodec(Codec):
    """A wire codec whose ``encode`` gives the whole websocket frame, header included.

    Because a server frame does not depend on the socket, :class:`projections.live.LiveGame`
    encodes each update once per visibility class and codec with this, and every socket of the
    class is handed those very bytes to write: no per-socket framing or copy.
    """

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.name = codec.name
        self.binary = codec.binary

    def encode(self, frame: dict[str, Any]) -> bytes:
        return websocket_frame(self.codec.encode(frame), self.binary)

    def ack(self, command_id: str, version: int, duplicate: bool) -> bytes:
        return websocket_frame(self.codec.ack(command_id, version, duplicate), self.binary)

    def decode(self, data: str | bytes) -> Any:
        return self.codec.decode(data)

    def encode_part(self, value: dict[str, Any]) -> bytes:
        return self.codec.encode_part(value)  # a part is framed only within a whole frame

    def encode_with_view(self, frame: dict[str, Any], shared: bytes, own: dict[str, Any]) -> bytes:
        return websocket_frame(self.codec.encode_with_view(frame, shared, own), self.binary)


FRAMED = {codec.name: FramedCodec(codec) for codec in (JSON, MSGPACK)}

class Connection:
    """One socket's outbox and writer task; a :class:`projections.live.Subscriber`.

    Every payload is a whole websocket frame (:class:`FramedCodec`), written to the socket's
    transport as it is. ``drain`` waits while the transport is paused by flow control.
    """

    def __init__(
        self,
        ws: web.WebSocketResponse,
        codec: FramedCodec,
        transport: asyncio.Transport,
        drain: Callable[[], Awaitable[None]],
        *,
        outbox_limit: int,
        metrics: Metrics,
        spectator_batch: SpectatorBatch | None = None,
    ) -> None:
        self.ws = ws
        self.codec = codec
        self.transport = transport
        self.drain = drain
        self.viewer: int | None = None
        self.game_id = ""
        self.outbox_limit = outbox_limit
        self.metrics = metrics
        self._outbox: collections.deque[tuple[bytes, float]] = collections.deque()
        self._held: list[tuple[bytes, float]] | None = None
        self._corked: list[bytes] | None = None
        """Frames kept back while this socket's command runs, written with its answer (:meth:`cork`)."""
        self.spectator_batch = spectator_batch
        """Where this socket's updates wait to be written together while it watches as a spectator."""
        self.batched: list[bytes] | None = None
        self.wrote_at = 0.0
        self._wake = asyncio.Event()
        self._closing = False
        self._closer: asyncio.Future[bool] | None = None  # held: the loop keeps only a weak reference
        self._writer = asyncio.create_task(self._write_loop())

    # the Subscriber surface: called by the node's reader, never blocks
    def deliver(self, data: bytes) -> None:
        if self._held is not None:
            self._held.append((data, time.perf_counter()))
        elif self.viewer is None and self.spectator_batch is not None and self.spectator_batch.keeps(self, data):
            return
        elif not self._write_now(data):
            self._enqueue((data, time.perf_counter()))

    def write_batched(self, data: bytes, frames: int) -> None:
        """Write a spectator's updates kept back by :attr:`spectator_batch`, ``frames`` of them."""
        if not self._write_now(data, frames):
            self.metrics.ws_frames_out.inc(frames - 1)  # the writer task counts the write as one
            self._enqueue((data, time.perf_counter()))

    def send(self, frame: dict[str, Any]) -> None:
        self.send_encoded(self.codec.encode(frame))

    def send_encoded(self, data: bytes) -> None:
        """Send a frame :attr:`codec` encoded already."""
        take_waiting(self)  # a reply never overtakes the updates sent before it
        if self._held is not None or not self._write_now(data):
            self._enqueue((data, 0.0))

    def _write_now(self, data: bytes, frames: int = 1) -> bool:
        """Write ``data`` right here when the socket is keeping up; False to queue it instead.

        This is the common case (nothing queued, the transport's buffer nearly empty): one
        ``transport.write``, which never waits, so fanning an update out to a thousand
        spectators costs no await and no task switch per socket.
        """
        if self._outbox or self._closing:
            return False
        transport = self.transport
        if transport.is_closing() or self.ws.closed:  # nothing more will reach this socket
            self._closing = True
            return True
        if self._corked is not None:
            self._corked.append(data)
            return True
        if transport.get_write_buffer_size() > DIRECT_WRITE_BUFFER:
            return False
        transport.write(data)
        self.metrics.ws_frames_out.inc(frames)
        return True

    def cork(self) -> None:
        """Keep this socket's frames back until :meth:`uncork`: while the socket's own command
        runs, its update (pushed as the store answers, :meth:`service.edge.reader.Node.appended`)
        then leaves with the ack in one ``transport.write``, one ``send`` system call instead of
        two (each the largest single cost of a trivial command)."""
        self._corked = []

    def uncork(self, answer: bytes | None = None) -> None:
        """Write what was kept back, and ``answer`` after it, in one write (in order, as ever)."""
        frames, self._corked = self._corked or [], None
        if answer is not None:
            frames.append(answer)
        if not frames:
            return
        data = frames[0] if len(frames) == 1 else b"".join(frames)
        if not self._write_now(data):
            self._enqueue((data, 0.0))
        elif len(frames) > 1:
            self.metrics.ws_frames_out.inc(len(frames) - 1)

    def hold(self) -> None:
        """Queue live updates aside until :meth:`release` (while a hello is answered)."""
        self._held = []

    def release(self) -> None:
        held, self._held = self._held or [], None
        for item in held:
            self._enqueue(item)

    def drop_held(self) -> None:
        """Forget the updates held back: the hello failed, and the client's retry (with the same
        ``since``) reads them from the stream again, so sending them now would send them twice."""
        self._held = None

    def _enqueue(self, item: tuple[bytes, float]) -> None:
        """Queue a payload; the stamp (0 for direct replies) times how long updates wait here."""
        if self._closing:
            return
        if len(self._outbox) >= self.outbox_limit:
            self.close_soon(WSCloseCode.TRY_AGAIN_LATER, "too slow to take updates; reconnect with since")
            return
        self._outbox.append(item)
        self._wake.set()

    async def _write_loop(self) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError, asyncio.CancelledError):
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._outbox:
                    if self._closing or self.transport.is_closing() or self.ws.closed:
                        self._outbox.clear()
                        break
                    data, stamp = self._outbox.popleft()
                    self.transport.write(data)
                    self.metrics.ws_frames_out.inc()
                    if stamp:
                        self.metrics.update_queue_seconds.observe(time.perf_counter() - stamp)
                    await self.drain()

    async def flush(self, timeout: float = 2.0) -> None:
        """Wait (bounded) until the outbox is empty: used before a deliberate close."""
        take_waiting(self)
        deadline = time.monotonic() + timeout
        # Bounded polling: the writer has no "outbox empty" event, and this runs once per deliberate close.
        while self._outbox and time.monotonic() < deadline and not self._writer.done():  # noqa: ASYNC110
            await asyncio.sleep(0.005)

    def close_soon(self, code: int, message: str) -> None:
        if self._closing:
            return
        self._closing = True
        self._closer = asyncio.ensure_future(self.ws.close(code=code, message=message.encode()))

    async def stop(self) -> None:
        self._closing = True
        self.batched = None
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer
