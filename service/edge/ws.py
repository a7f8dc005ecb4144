"""The websocket endpoint ``/games/{id}/ws``: one reader (the handler task), one writer per socket.

The handler task is the only one that reads from the socket; it parses each frame into a typed
message and dispatches on it. Everything sent to the client (the hello answer, acks, errors and
the live updates the node's stream reader fans out) is a whole websocket frame prepared once
(:class:`FramedCodec`; an update once per visibility class) and written in order: straight to
the socket's transport while the socket keeps up, else through the connection's outbox by its
own writer task, which waits on flow control. While a socket's command runs, the frames that
come for it (its own update, pushed as the append lands, and the other seats' updates) are kept
back and written with the ack in one ``transport.write``: one ``send`` system call, the largest
single cost of a trivial command, instead of one per frame. While a ``hello`` is being answered
the live updates are held back, so the answer (``snapshot``, or ``update`` with what was missed
since ``since``) is always the first frame and nothing is sent twice or skipped after it; a hello
that fails drops what it held, since the client's retry reads it again.

The service owns its server frames outright: :func:`websocket_frame` builds them (RFC 6455 5.2:
final, unmasked, uncompressed), and they are written on the request's transport
(``BaseRequest.transport``) with the response's writer's ``drain``, both public aiohttp API.
aiohttp keeps the handshake, the reading, ping/pong and the close; it too writes each frame of
its own in one call, so the two never interleave within a frame. aiohttp's ``send_bytes`` would
frame the same payload again for every socket and await per socket, which the fan-out avoids.

Limits: a frame above ``DONJON_WS_MAX_FRAME`` bytes gets ``frame_too_large`` (and from four
times that, aiohttp closes the socket with 1009); frames sent before the answer to the previous
one (already waiting when it was done) count against ``DONJON_WS_RATE`` frames a second (burst
``DONJON_WS_BURST``) and get ``rate_limited`` beyond it, so a client that waits for each answer is
never limited; a socket that keeps flooding is closed with 1008; a socket too slow to take its
updates (``DONJON_WS_OUTBOX`` frames queued) is closed with 1013 and may reconnect with ``since``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import struct
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from aiohttp import WSCloseCode, WSMessage, WSMsgType, web

from events.errors import StoreUnavailable
from projections.live import snapshot_frame, update_frame
from service.edge.keys import METRICS, NODE, SERVICE, SETTINGS, SOCKETS, SPECTATOR_BATCH
from service.edge.spectator_batch import SpectatorBatch, take_waiting
from service.edge.wire import (
    JSON,
    MSGPACK,
    MSGPACK_SUBPROTOCOL,
    Codec,
    CommandFrame,
    Hello,
    error_frame,
    parse_frame,
    readable_command_id,
)
from service.errors import ErrorCode, ServiceError
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.timing.presence import stamp_while_open

__all__ = ["websocket_handler", "Connection", "FramedCodec", "TokenBucket", "websocket_frame"]

FLOOD_CLOSE_AFTER = 100
"""Consecutive rate-limited frames after which a socket is closed (1008)."""
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


class TokenBucket:
    """``rate`` tokens a second up to ``burst``; each frame takes one."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


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


class _Session:
    """The protocol state of one socket: before and after ``hello``, and dispatch."""

    def __init__(self, request: web.Request, conn: Connection, game_id: str) -> None:
        app = request.app
        self.settings = app[SETTINGS]
        self.service = app[SERVICE]
        self.node = app[NODE]
        self.metrics = app[METRICS]
        self.conn = conn
        self.game_id = game_id
        self.greeted = False
        self.presence: asyncio.Task[None] | None = None
        """The task stamping this seat as seen while the socket is open (service.timing.presence)."""
        self.closed = asyncio.Event()
        """Set when the socket is done: the presence task stamps once more and ends."""
        self.bucket = TokenBucket(self.settings.ws_rate, self.settings.ws_burst)
        self.limited_in_a_row = 0
        self.log = get_logger(game_id=game_id)

    def error(self, exc: ServiceError, command_id: str | None = None) -> None:
        self.metrics.ws_errors.inc(code=exc.code)
        self.conn.send(error_frame(exc, command_id))

    async def on_frame(self, data: str | bytes, waited: bool = False) -> None:
        """Answer one client frame. ``waited``: the socket was idle when it came (the server
        had answered every earlier frame), so it costs nothing from the rate limit."""
        self.metrics.ws_frames_in.inc()
        size = len(data) if isinstance(data, bytes) else len(data.encode())  # text arrives decoded
        if size > self.settings.ws_max_frame:
            self.error(
                ServiceError(
                    ErrorCode.FRAME_TOO_LARGE,
                    f"frame of {size} bytes is above the limit of {self.settings.ws_max_frame}",
                )
            )
            return
        if not waited and not self.bucket.take():
            self.limited_in_a_row += 1
            if self.limited_in_a_row >= FLOOD_CLOSE_AFTER:
                self.conn.close_soon(WSCloseCode.POLICY_VIOLATION, "flooding; slow down")
                return
            self.error(
                ServiceError(
                    ErrorCode.RATE_LIMITED,
                    f"more than {self.settings.ws_rate:g} frames a second sent before the answer to the previous one;"
                    " wait for each answer, or slow down",
                ),
                _command_id_of(self.conn.codec, data),
            )
            return
        self.limited_in_a_row = 0
        command_id = None
        try:
            obj = self.conn.codec.decode(data)
            command_id = readable_command_id(obj)
            frame = parse_frame(obj)
            if isinstance(frame, CommandFrame):
                await self.on_command(frame)
            elif isinstance(frame, Hello):
                await self.on_hello(frame)
        except ServiceError as exc:
            self.error(exc, command_id)
        except StoreUnavailable as exc:
            self.metrics.store_unavailable.inc()
            self.error(ServiceError(ErrorCode.STORE_UNAVAILABLE, f"the event store is unavailable: {exc}"), command_id)
        except Exception:
            self.log.exception("ws.frame_failed", command_id=command_id)
            message = "internal error (logged on the server); resend with the same id to learn whether it applied"
            self.error(ServiceError(ErrorCode.INTERNAL, message), command_id)

    async def on_hello(self, hello: Hello) -> None:
        if self.greeted:
            raise ServiceError(ErrorCode.BAD_FRAME, "hello was already received on this socket")
        seat = await self.service.authenticate(self.game_id, hello.token)
        live = await self.node.live_game(self.game_id)
        conn = self.conn
        conn.viewer, conn.game_id = seat, self.game_id
        shown = live.version if seat is not None else live.spectators.version
        if hello.since is not None and hello.since > shown:
            raise ServiceError(
                ErrorCode.BAD_FRAME, f"since {hello.since} is ahead of game {self.game_id!r} (version {shown})"
            )
        # No await between subscribing and reading the projection: the pushes that follow are
        # exactly those after this version.
        conn.hold()
        self.node.subscribe(live, conn)
        projection = live.projection if seat is not None else live.spectators  # spectator delay
        try:
            if hello.since is None:
                conn.send(snapshot_frame(projection, seat))
            else:
                missed = await self.service.events(self.game_id, hello.since + 1, projection.version)
                missed = [envelope for envelope in missed if envelope.version <= projection.version]
                conn.send(update_frame(projection, missed, seat))
        except BaseException:
            self.node.unsubscribe(self.game_id, conn)
            conn.drop_held()
            raise
        conn.release()
        self.greeted = True
        if seat is not None:
            self.presence = asyncio.create_task(
                stamp_while_open(
                    self.service.store, self.game_id, seat, self.service.clock, self.settings.away_ms, self.closed
                )
            )
        self.log.info("ws.hello", seat=seat, version=projection.version, since=hello.since)

    async def on_command(self, frame: CommandFrame) -> None:
        if not self.greeted:
            raise ServiceError(ErrorCode.HELLO_REQUIRED, "send a hello frame before commands")
        if self.conn.viewer is None:
            raise ServiceError(ErrorCode.SPECTATOR, "spectators cannot send commands; say hello with a seat token")
        self.conn.cork()
        try:
            result = await self.service.execute(
                self.game_id, self.conn.viewer, frame.id, frame.command, frame.expected_version
            )
        except BaseException:
            self.conn.uncork()  # the error frame follows what was kept back
            raise
        self.conn.uncork(self.conn.codec.ack(frame.id, result.version, result.duplicate))


def _command_id_of(codec: Codec, data: str | bytes) -> str | None:
    """The id of a (rate-limited) command frame, so the client knows which one was dropped."""
    with contextlib.suppress(ServiceError):
        return readable_command_id(codec.decode(data))
    return None


async def _frames(ws: web.WebSocketResponse) -> AsyncIterator[tuple[WSMessage, bool]]:
    """The socket's messages until it closes, each with whether the server had to wait for it.

    A frame the server waited for came while the socket owed nothing: the client sent it after
    the answer to its previous frame (the protocol's "wait for the ack, then send"), so that
    client can never be rate limited. A frame already buffered when the previous one was done
    was sent before its answer; only those count. Waiting is seen without private API: a
    callback queued before ``receive()`` has run only if ``receive()`` gave the loop a turn.
    """
    loop = asyncio.get_running_loop()
    while True:
        turned: list[bool] = []
        loop.call_soon(turned.append, True)
        message = await ws.receive()
        if message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED):
            return
        yield message, bool(turned)


async def websocket_handler(request: web.Request) -> web.StreamResponse:
    """``GET /games/{id}/ws``: upgrade, then frames until the client or the server closes."""
    app = request.app
    settings = app[SETTINGS]
    game_id = request.match_info["id"]
    await app[SERVICE].authenticate(game_id, None)  # 404 before the upgrade for an unknown game
    ws = web.WebSocketResponse(
        protocols=(MSGPACK_SUBPROTOCOL,),
        max_msg_size=settings.ws_max_frame * 4,
        heartbeat=30.0,
        timeout=2.0,
        compress=False,  # per-socket deflate would undo encoding each update once per class
    )
    if not ws.can_prepare(request).ok:  # aiohttp would answer plain text; every error body is JSON
        raise ServiceError(
            ErrorCode.BAD_REQUEST, f"{request.path} is a websocket: send a GET with 'Upgrade: websocket' (RFC 6455)"
        )
    writer = await ws.prepare(request)
    codec = FRAMED[MSGPACK.name if ws.ws_protocol == MSGPACK_SUBPROTOCOL else JSON.name]
    metrics = app[METRICS]
    transport = request.transport
    if transport is None:  # the client went away during the upgrade
        return ws
    conn = Connection(
        ws, codec, transport, writer.drain, outbox_limit=settings.ws_outbox, metrics=metrics,
        spectator_batch=app.get(SPECTATOR_BATCH),
    )
    session = _Session(request, conn, game_id)
    app[SOCKETS].add(ws)
    metrics.ws_connections.inc()
    try:
        async for message, waited in _frames(ws):
            if message.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                await session.on_frame(message.data, waited)
            elif message.type == WSMsgType.ERROR:
                session.log.info("ws.error", error=str(ws.exception()))
                break
        await conn.flush(0.5)
    finally:
        if session.presence is not None:  # stamped as seen once more before the socket counts as gone
            session.closed.set()
            with contextlib.suppress(asyncio.CancelledError):  # bounded: a hung store must not hold the socket
                await asyncio.wait({session.presence}, timeout=2.0)
            session.presence.cancel()
        metrics.ws_connections.dec()
        app[SOCKETS].discard(ws)
        app[NODE].unsubscribe(game_id, conn)
        await conn.stop()
    return ws
