"""The websocket endpoint ``/games/{id}/ws``: one reader (the handler task), one writer per socket.

The handler task is the only one that reads from the socket; it parses each frame into a typed
message and dispatches on it. What it sends goes through the socket's
:class:`~service.edge.outbox.Connection` (whole frames prepared once, written in order; a
command's frames leave with its ack in one write). While a ``hello`` is being answered the live
updates are held back, so the answer (``snapshot``, or ``update`` with what was missed since
``since``) is always the first frame and nothing is sent twice or skipped after it; a hello that
fails drops what it held, since the client's retry reads it again.

Limits: a frame above ``DONJON_WS_MAX_FRAME`` bytes gets ``frame_too_large`` (and from four
times that, aiohttp closes the socket with 1009); frames sent before the answer to the previous
one (already waiting when it was done) count against ``DONJON_WS_RATE`` frames a second (burst
``DONJON_WS_BURST``) and get ``rate_limited`` beyond it, so a client that waits for each answer is
never limited; a socket that keeps flooding is closed with 1008; a socket too slow to take its
updates (``DONJON_WS_OUTBOX`` frames queued) is closed with 1013 and may reconnect with ``since``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from aiohttp import WSCloseCode, WSMessage, WSMsgType, web

from events.errors import StoreUnavailable
from projections.live import snapshot_frame, update_frame
from service.edge.keys import METRICS, NODE, SERVICE, SETTINGS, SOCKETS, SPECTATOR_BATCH
from service.edge.outbox import FRAMED, Connection
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
from service.timing.presence import stamp_while_open

__all__ = ["websocket_handler", "TokenBucket"]

FLOOD_CLOSE_AFTER = 100
"""Consecutive rate-limited frames after which a socket is closed (1008)."""
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
