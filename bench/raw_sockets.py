"""The bench's websocket clients on raw sockets: no websocket library, as cheap as a client can be.

The handshake is done by hand (:func:`upgraded`), frames are built (:func:`client_frame`, a zero
mask) and cut (:func:`frame_at`, :func:`take_frames`) by hand, and each socket is read from an
event-loop reader callback. :class:`Player` is a seat of the closed-loop load (it sends its next
command straight from the ack it has just read); :class:`Spectator` is the latency probe of the
fan-out figures (it takes the kernel's receive stamp of each update). So one load process can
drive a hundred seats or watch a thousand sockets while the machine's cores go to the service.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import struct
import time
from typing import Any, Self

from bench.die_game import ROLL

__all__ = ["Player", "Spectator", "client_frame", "frame_at", "receive_some", "take_frames", "upgraded"]


_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
"""Linux: stamp each received segment with the wall-clock time it reached the socket."""
_UPDATE = b'{"type":"update",'
_VERSION = b'"version":'


class Spectator:
    """A spectator socket that does only what a latency probe needs: no websocket library.

    It does the websocket handshake and the ``hello`` by hand, then reads with ``recvmsg`` from
    a reader callback, taking the kernel's receive stamp (``SO_TIMESTAMPNS``: when the bytes
    reached this socket, whatever this process was doing then) and finding the frame's
    ``version`` by a byte search, not a JSON parse. One process can so watch a thousand sockets
    without its own reading order showing up as latency. Without kernel stamps it falls back to
    the time of the read.
    """

    def __init__(self, sock: socket.socket, last: int) -> None:
        self.sock = sock
        self.last = last
        self.buffer = bytearray()
        self.arrivals: dict[int, tuple[float, float]] = {}
        self.kernel_stamps = True
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @classmethod
    async def connect(cls, host: str, port: int, game_id: str, last: int) -> Spectator:
        loop = asyncio.get_running_loop()
        sock, rest = await upgraded(host, port, game_id)
        spectator = cls(sock, last)
        spectator.buffer = rest
        await loop.sock_sendall(sock, client_frame(b'{"type":"hello"}'))
        while not spectator.frames():  # the snapshot
            spectator.buffer += await receive_some(loop, sock)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        loop.add_reader(sock.fileno(), spectator.on_readable)
        return spectator

    def frames(self) -> list[tuple[int, bytes]]:
        return take_frames(self.buffer)

    def on_readable(self) -> None:
        try:
            data, ancillary, _flags, _address = self.sock.recvmsg(1 << 16, socket.CMSG_SPACE(16))
        except (BlockingIOError, InterruptedError):
            return
        read_at = time.time()
        at = _kernel_stamp(ancillary)
        if at is None:
            self.kernel_stamps, at = False, read_at
        if not data:
            self._finish()
            return
        self.buffer += data
        for opcode, payload in self.frames():
            if opcode == 0x9:  # ping: answer, or the server's heartbeat closes the socket
                self.sock.send(client_frame(payload, opcode=0xA))
            elif opcode == 0x8:
                self._finish()
            elif payload.startswith(_UPDATE):
                at_version = payload.find(_VERSION) + len(_VERSION)
                version = int(payload[at_version : payload.index(b",", at_version)])
                self.arrivals.setdefault(version, (at, read_at))
                if version >= self.last:
                    self._finish()

    def _finish(self) -> None:
        asyncio.get_running_loop().remove_reader(self.sock.fileno())
        if not self.done.done():
            self.done.set_result(None)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.send(client_frame(b"\x03\xe8", opcode=0x8))
        self.sock.close()


def _kernel_stamp(ancillary: list[tuple[int, int, bytes]]) -> float | None:
    for level, kind, value in ancillary:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(value) >= 16:
            seconds, nanoseconds = struct.unpack("qq", value[:16])
            return seconds + nanoseconds / 1e9
    return None


async def upgraded(host: str, port: int, game_id: str) -> tuple[socket.socket, bytearray]:
    """A non-blocking socket on game ``game_id``'s websocket, the handshake done by hand, and the
    bytes that came after the handshake's answer."""
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setblocking(False)
    await loop.sock_connect(sock, (host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /games/{game_id}/ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    await loop.sock_sendall(sock, request.encode())
    buffer = bytearray()
    while b"\r\n\r\n" not in buffer:
        buffer += await receive_some(loop, sock)
    head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(f"websocket upgrade refused: {head[:200]!r}")
    return sock, bytearray(rest)


def take_frames(buffer: bytearray) -> list[tuple[int, bytes]]:
    """Take the whole frames (opcode, payload) out of ``buffer``; servers never mask."""
    found = []
    at = 0
    while (frame := frame_at(buffer, at)) is not None:
        opcode, start, at = frame
        found.append((opcode, bytes(buffer[start:at])))
    del buffer[:at]
    return found


def frame_at(buffer: bytearray, at: int) -> tuple[int, int, int] | None:
    """The server frame that begins at ``at`` in ``buffer``: (opcode, where its payload begins,
    where it ends), or ``None`` while it has not all arrived. Servers never mask."""
    if len(buffer) - at < 2:
        return None
    size, start = buffer[at + 1] & 0x7F, at + 2
    if size == 126:
        size, start = int.from_bytes(buffer[at + 2 : at + 4], "big"), at + 4
    elif size == 127:
        size, start = int.from_bytes(buffer[at + 2 : at + 10], "big"), at + 10
    if len(buffer) < start + size:
        return None
    return buffer[at] & 0x0F, start, start + size


_ACK = b'{"type":"ack",'
_ERROR = b'{"type":"error",'
_ROLL_HEAD = json.dumps(ROLL, separators=(",", ":")).encode()[:-1] + b',"id":"'
"""A roll command's frame up to its id: ``ROLL``'s JSON without its closing brace."""


class Player:
    """A seat's socket for the closed-loop load, as cheap as a client can be: no websocket library.

    The handshake is :func:`upgraded`'s; then the socket is read from a reader callback, which
    sends the next command (its frame built from a fixed prefix and the id) straight from the
    ack it has just read. An ack or an error is told by its first bytes (the service's JSON
    frames start with their ``type``); the update that comes with each command is skipped
    unparsed. So the load process spends little beyond its socket calls, and the machine's
    cores go to the service.
    """

    def __init__(self, sock: socket.socket, buffer: bytearray, number: int) -> None:
        self.sock = sock
        self.buffer = buffer
        self.prefix = b"%d-" % number
        self.sent_at = 0.0
        self.stop = 0.0
        self.latencies: list[float] = []
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @classmethod
    async def connect(cls, host: str, port: int, game_id: str, token: str, number: int) -> Self:
        loop = asyncio.get_running_loop()
        sock, rest = await upgraded(host, port, game_id)
        player = cls(sock, rest, number)
        await loop.sock_sendall(sock, client_frame(json.dumps({"type": "hello", "token": token}).encode()))
        while not take_frames(player.buffer):  # the snapshot
            player.buffer += await receive_some(loop, sock)
        return player

    def start(self, stop: float) -> None:
        """Send commands until ``stop`` (a ``perf_counter`` time), each once the last is acked."""
        self.stop = stop
        asyncio.get_running_loop().add_reader(self.sock.fileno(), self.on_readable)
        self.send_next()

    def payload(self, number: int) -> bytes:
        """The JSON of this socket's command ``number``: a roll of the bench game."""
        return _ROLL_HEAD + self.prefix + b'%d"}' % number

    def send_next(self) -> None:
        frame = client_frame(self.payload(len(self.latencies)))
        self.sent_at = time.perf_counter()
        try:
            sent = self.sock.send(frame)
        except OSError as exc:  # the server went away (or, never seen, a full socket buffer)
            self._fail(exc)
            return
        if sent != len(frame):  # a frame of ~80 bytes into a socket buffer the acks keep empty
            self._fail(RuntimeError("the command frame was not sent whole"))

    def on_readable(self) -> None:
        try:
            data = self.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        if not data:
            self._fail(ConnectionError("the server closed the socket"))
            return
        self.buffer += data
        for opcode, payload in take_frames(self.buffer):
            if opcode == 0x9:  # ping: answer, or the server's heartbeat closes the socket
                self.sock.send(client_frame(payload, opcode=0xA))
            elif opcode == 0x8:
                self._fail(ConnectionError(f"the server closed the socket: {payload[2:]!r}"))
            elif payload.startswith(_ACK):
                now = time.perf_counter()
                self.latencies.append(now - self.sent_at)
                if now < self.stop:
                    self.send_next()
                elif not self.done.done():
                    self.done.set_result(None)
            elif payload.startswith(_ERROR):
                error = json.loads(payload)
                if not self.refused(error):
                    self._fail(RuntimeError(error))

    def refused(self, error: dict[str, Any]) -> bool:
        """Whether this socket goes on after the server refused its command with ``error``
        (it has then sent what comes next itself): here never, a refusal ends the load."""
        return False

    def _fail(self, error: BaseException) -> None:
        if not self.done.done():
            self.done.set_exception(error)

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            asyncio.get_running_loop().remove_reader(self.sock.fileno())
        with contextlib.suppress(OSError):
            self.sock.send(client_frame(b"\x03\xe8", opcode=0x8))
        self.sock.close()


async def receive_some(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> bytes:
    data = await loop.sock_recv(sock, 1 << 16)
    if not data:
        raise ConnectionError("the server closed the socket during the handshake")
    return data


def client_frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """A client's websocket frame; its mask is zero, so the payload goes as it is."""
    if len(payload) < 126:
        header = bytes((0x80 | opcode, 0x80 | len(payload)))
    else:
        header = bytes((0x80 | opcode, 0x80 | 126)) + len(payload).to_bytes(2, "big")
    return header + b"\0\0\0\0" + payload

