"""Service benchmarks on the embedded server: throughput, latencies, fan-out, replay speed.

The service runs in this process (an aiohttp site on a free localhost port, the embedded Valkey
in a temporary folder, ``appendfsync always`` as ``donjon serve`` defaults to); the load comes
from one child process, so that the measured process does only the service's work. On a
two-core machine that is one core each (the Valkey server shares them).

To measure the service rather than a game's rules, the commands go to :data:`BENCH`, a one-seat
engine whose only command draws a die roll from the service's rng (a random outcome written
into the event, like the real games) and that never ends. Replay speed is measured on real
games (random legal play through the command path, then :func:`service.fairness.replay.replay_game`).

Figures:

* ``commands/s``: acks per second, 100 games each with one socket sending as fast as acked;
* ``ack p50/p99 @500/s``: command -> ack latency at an open-loop 500 commands/s over 100 games;
* ``spectator p50/p99``: command -> update at each spectator, 10 games x 100 spectators, and
  one game x 1,000 spectators, each paced at 5 commands/s. The time is the kernel's receive
  stamp on each spectator's socket (what a thousand separate machines would see), beside the
  same stamped when the one load process got round to reading it, and the server's own part
  (the node's reader folding, encoding and writing to every socket) measured exactly;
* ``replay``: events folded per second (``donjon replay``'s fold, decode excluded) per game.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import gc
import itertools
import json
import multiprocessing
import os
import random
import resource
import socket
import struct
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from bench.processes import process_cpu
from games.base import Event, OptionSpec, Rng, command

if TYPE_CHECKING:  # the embedded server is imported where it starts, not with the bench
    from events.embedded import FsyncMode

__all__ = ["BENCH", "BenchEngine", "service_figures", "replay_figures", "engine_figures", "percentile"]


# --- the bench engine ------------------------------------------------------------------------------


class BenchEngine:
    """One seat, one command (``roll``), never over: the service's cost with a trivial game."""

    name = "bench"
    title = "Service benchmark (a die rolled forever)"
    min_seats = 1
    max_seats = 1
    options: Mapping[str, OptionSpec] = {}
    secret_options: frozenset[str] = frozenset()

    def catalog_entry(self) -> dict[str, Any]:
        return {"id": self.name, "title": self.title, "min_seats": 1, "max_seats": 1, "options": {}}

    def normalize_options(self, options: Mapping[str, Any], seats: int) -> dict[str, Any]:
        return {}

    def initial_state(self) -> tuple[int, int]:
        return (0, 0)

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        return [Event("opened", {})]

    def evolve(self, state: tuple[int, int], event: Event) -> tuple[int, int]:
        if event.type == "rolled":
            return (state[0] + 1, state[1] + event.payload["value"])
        return state

    def decide(self, state: tuple[int, int], seat: int, cmd: dict[str, Any], rng: Rng) -> list[Event]:
        return [Event("rolled", {"value": rng.stream("die", state[0]).randint(1, 6)})]

    def legal_moves(self, state: tuple[int, int], seat: int | None) -> list[dict[str, Any]]:
        return [command("roll")] if seat == 0 else []

    def waiting_for(self, state: tuple[int, int]) -> list[int]:
        return [0]

    def view(self, state: tuple[int, int], viewer: int | None) -> dict[str, Any]:
        return {"rolls": state[0], "total": state[1], "legal": self.legal_moves(state, viewer)}

    def redact(self, event: Event, viewer: int | None) -> Event:
        return event

    def is_terminal(self, state: tuple[int, int]) -> bool:
        return False

    def reveals(self, state: tuple[int, int], event: Event) -> bool:
        return event.type == "rolled"  # a die roll is random: nothing to undo across it

    def clock_seat(self, state: tuple[int, int]) -> int | None:
        return 0

    def timeout_answer(self, state: tuple[int, int], seat: int) -> dict[str, Any] | None:
        return None

    def cooperative(self, options: Mapping[str, Any]) -> bool:
        return False

    def summary(self, state: tuple[int, int]) -> dict[str, Any]:
        return {"status": "active", "rolls": state[0]}


BENCH = BenchEngine()
ROLL = {"type": "command", "command": {"type": "roll", "args": {}}}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


# --- load generators (run in the child process) --------------------------------------------------


async def _new_game(session: Any, base: str) -> tuple[str, str]:
    async with session.post(f"{base}/games", json={"game": "bench", "seats": 1}) as response:
        game_id = (await response.json())["id"]
    async with session.post(f"{base}/games/{game_id}/seats", json={"name": "bench"}) as response:
        token = (await response.json())["token"]
    return game_id, token


async def _socket(session: Any, base: str, game_id: str, token: str | None = None) -> Any:
    ws = await session.ws_connect(f"{base}/games/{game_id}/ws", max_msg_size=0)
    hello: dict[str, Any] = {"type": "hello"}
    if token:
        hello["token"] = token
    await ws.send_json(hello)
    await ws.receive_json()
    return ws


async def _throughput(base: str, games: int, seconds: float) -> dict[str, Any]:
    """Closed loop: ``games`` :class:`_Player` sockets, each sending its next command as soon as
    the last one is acked, for ``seconds``."""
    import aiohttp

    host, port = base.removeprefix("http://").split(":")
    async with aiohttp.ClientSession() as session:
        pairs = [await _new_game(session, base) for _ in range(games)]
    players = [await _Player.connect(host, int(port), game_id, token, n) for n, (game_id, token) in enumerate(pairs)]
    started, spent = time.perf_counter(), time.process_time()
    for player in players:
        player.start(started + seconds)
    try:
        await asyncio.gather(*(player.done for player in players))
    finally:
        ended, spent = time.perf_counter(), time.process_time() - spent
        for player in players:
            player.close()
    latencies = [latency for player in players for latency in player.latencies]
    return {
        "per_s": len(latencies) / (ended - started),
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "n": len(latencies),
        "window": (started, ended),  # perf_counter is the system-wide monotonic clock on Linux
        "client_cpu": spent,  # the load process's own CPU seconds over the window
    }


async def _paced(base: str, games: int, rate: float, seconds: float) -> dict[str, Any]:
    """Open loop: ``rate`` commands/s in total, spread evenly over ``games`` sockets."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        pairs = [await _new_game(session, base) for _ in range(games)]
        sockets = [await _socket(session, base, game_id, token) for game_id, token in pairs]
        latencies: list[float] = []
        sent_at: dict[str, float] = {}
        interval = games / rate
        start = time.perf_counter() + 0.2
        count = int(seconds * rate / games)

        async def send(ws: Any, n: int) -> None:
            for k in range(count):
                delay = start + n * interval / games + k * interval - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                sent_at[f"{n}-{k}"] = time.perf_counter()
                await ws.send_json(dict(ROLL, id=f"{n}-{k}"))

        async def read(ws: Any) -> None:
            got = 0
            while got < count:
                frame = await ws.receive_json()
                if frame["type"] == "ack":
                    latencies.append(time.perf_counter() - sent_at[frame["id"]])
                    got += 1
                elif frame["type"] == "error":
                    raise RuntimeError(frame)

        await asyncio.gather(*(send(ws, n) for n, ws in enumerate(sockets)), *(read(ws) for ws in sockets))
        for ws in sockets:
            await ws.close()
    return {"p50": percentile(latencies, 50), "p99": percentile(latencies, 99), "n": len(latencies)}


async def _fanout(base: str, games: int, spectators: int, rate_per_game: float, seconds: float) -> dict[str, Any]:
    """Each game: one player paced at ``rate_per_game``, ``spectators`` sockets watching.

    The spectators are :class:`_Spectator` sockets, stamped by the kernel on arrival (see there),
    so the figure is when each spectator's machine had its update, not when this one process got
    round to reading a thousand sockets. ``read`` is the same, stamped when this process read it.
    """
    import aiohttp

    host, port = base.removeprefix("http://").split(":")
    async with aiohttp.ClientSession() as session:
        pairs = [await _new_game(session, base) for _ in range(games)]
        players = [await _socket(session, base, game_id, token) for game_id, token in pairs]
        count = int(seconds * rate_per_game)
        last = 3 + count  # created, seat taken, opened, then one event per command
        watchers: list[tuple[int, _Spectator]] = []
        for game_index, (game_id, _) in enumerate(pairs):
            for spectator in await asyncio.gather(
                *(_Spectator.connect(host, int(port), game_id, last) for _ in range(spectators))
            ):
                watchers.append((game_index, spectator))
        sent_at: dict[tuple[int, int], float] = {}
        pending: dict[tuple[int, str], float] = {}
        start = time.time() + 0.3

        async def play(game_index: int, ws: Any) -> None:
            for k in range(count):
                delay = start + k / rate_per_game + game_index / (rate_per_game * games) - time.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                pending[(game_index, f"c{k}")] = time.time()
                await ws.send_json(dict(ROLL, id=f"c{k}"))
            acked = 0
            while acked < count:
                frame = await ws.receive_json()
                if frame["type"] == "ack":
                    sent_at[(game_index, frame["version"])] = pending.pop((game_index, frame["id"]))
                    acked += 1

        await asyncio.gather(*(play(i, ws) for i, ws in enumerate(players)))
        await asyncio.wait_for(asyncio.gather(*(spectator.done for _, spectator in watchers)), 30 + seconds)
        arrived: list[float] = []
        read: list[float] = []
        for game_index, spectator in watchers:
            for version, (at, read_at) in spectator.arrivals.items():
                sent = sent_at.get((game_index, version))
                if sent is not None:
                    arrived.append(at - sent)
                    read.append(read_at - sent)
            spectator.close()
        for ws in players:
            await ws.close()
    return {
        "p50": percentile(arrived, 50),
        "p99": percentile(arrived, 99),
        "n": len(arrived),
        "read_p50": percentile(read, 50),
        "read_p99": percentile(read, 99),
        "kernel_stamps": all(spectator.kernel_stamps for _, spectator in watchers),
    }


_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
"""Linux: stamp each received segment with the wall-clock time it reached the socket."""
_UPDATE = b'{"type":"update",'
_VERSION = b'"version":'


class _Spectator:
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
    async def connect(cls, host: str, port: int, game_id: str, last: int) -> _Spectator:
        loop = asyncio.get_running_loop()
        sock, rest = await _upgraded(host, port, game_id)
        spectator = cls(sock, last)
        spectator.buffer = rest
        await loop.sock_sendall(sock, _client_frame(b'{"type":"hello"}'))
        while not spectator.frames():  # the snapshot
            spectator.buffer += await _receive_some(loop, sock)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        loop.add_reader(sock.fileno(), spectator.on_readable)
        return spectator

    def frames(self) -> list[tuple[int, bytes]]:
        return _take_frames(self.buffer)

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
                self.sock.send(_client_frame(payload, opcode=0xA))
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
            self.sock.send(_client_frame(b"\x03\xe8", opcode=0x8))
        self.sock.close()


def _kernel_stamp(ancillary: list[tuple[int, int, bytes]]) -> float | None:
    for level, kind, value in ancillary:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(value) >= 16:
            seconds, nanoseconds = struct.unpack("qq", value[:16])
            return seconds + nanoseconds / 1e9
    return None


async def _upgraded(host: str, port: int, game_id: str) -> tuple[socket.socket, bytearray]:
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
        buffer += await _receive_some(loop, sock)
    head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(f"websocket upgrade refused: {head[:200]!r}")
    return sock, bytearray(rest)


def _take_frames(buffer: bytearray) -> list[tuple[int, bytes]]:
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


class _Player:
    """A seat's socket for the closed-loop load, as cheap as a client can be: no websocket library.

    The handshake is :func:`_upgraded`'s; then the socket is read from a reader callback, which
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
        sock, rest = await _upgraded(host, port, game_id)
        player = cls(sock, rest, number)
        await loop.sock_sendall(sock, _client_frame(json.dumps({"type": "hello", "token": token}).encode()))
        while not _take_frames(player.buffer):  # the snapshot
            player.buffer += await _receive_some(loop, sock)
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
        frame = _client_frame(self.payload(len(self.latencies)))
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
        for opcode, payload in _take_frames(self.buffer):
            if opcode == 0x9:  # ping: answer, or the server's heartbeat closes the socket
                self.sock.send(_client_frame(payload, opcode=0xA))
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
            self.sock.send(_client_frame(b"\x03\xe8", opcode=0x8))
        self.sock.close()


async def _receive_some(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> bytes:
    data = await loop.sock_recv(sock, 1 << 16)
    if not data:
        raise ConnectionError("the server closed the socket during the handshake")
    return data


def _client_frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """A client's websocket frame; its mask is zero, so the payload goes as it is."""
    if len(payload) < 126:
        header = bytes((0x80 | opcode, 0x80 | len(payload)))
    else:
        header = bytes((0x80 | opcode, 0x80 | 126)) + len(payload).to_bytes(2, "big")
    return header + b"\0\0\0\0" + payload


async def _real_games(base: str, game: str, games: int, seconds: float, warmup: float = 0.0) -> dict[str, Any]:
    """Closed loop over ``games`` tables of a real game with 2 seats: a seat whose view lists
    ``legal`` commands sends one of them, chosen at random, once every socket has seen the last
    ack's version; a finished game makes way for a new one. The figures count the ``seconds``
    after the first ``warmup`` seconds."""
    import aiohttp

    acks = 0
    latencies: list[float] = []
    refusals: dict[str, int] = {}
    measured_from = time.perf_counter() + warmup
    stop = measured_from + seconds

    async def table(session: Any, index: int) -> None:
        nonlocal acks
        rng = random.Random(index)
        while time.perf_counter() < stop:
            async with session.post(f"{base}/games", json={"game": game, "seats": 2}) as response:
                game_id = (await response.json())["id"]
            tokens = []
            for name in ("a", "b"):
                async with session.post(f"{base}/games/{game_id}/seats", json={"name": name}) as response:
                    tokens.append((await response.json())["token"])
            sockets = [await session.ws_connect(f"{base}/games/{game_id}/ws", max_msg_size=0) for _ in tokens]
            views: list[dict[str, Any]] = [{}, {}]
            versions = [0, 0]
            status = ["active", "active"]
            answers: list[asyncio.Queue[dict[str, Any]]] = [asyncio.Queue(), asyncio.Queue()]
            seen = asyncio.Event()

            async def read(  # this game's containers bound now: the readers end with the game
                seat: int,
                ws: Any,
                views: list[dict[str, Any]] = views,
                versions: list[int] = versions,
                status: list[str] = status,
                seen: asyncio.Event = seen,
                answers: list[asyncio.Queue[dict[str, Any]]] = answers,
            ) -> None:
                async for message in ws:
                    frame = message.json()
                    if frame["type"] in ("snapshot", "update"):
                        views[seat], versions[seat], status[seat] = frame["view"], frame["version"], frame["status"]
                        seen.set()
                    elif frame["type"] in ("ack", "error"):
                        answers[seat].put_nowait(frame)

            for ws, token in zip(sockets, tokens, strict=True):
                await ws.send_json({"type": "hello", "token": token})
            readers = [asyncio.create_task(read(seat, ws)) for seat, ws in enumerate(sockets)]
            at, k = 0, 0
            while time.perf_counter() < stop and "finished" not in status:
                movers = [seat for seat in (0, 1) if versions[seat] >= at and views[seat].get("legal")]
                if not movers or min(versions) < at:
                    seen.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(seen.wait(), 1.0)
                    continue
                seat = movers[0]
                k += 1
                sent = time.perf_counter()
                command = rng.choice(views[seat]["legal"])
                await sockets[seat].send_json({"type": "command", "id": f"{index}-{k}", "command": command})
                answer = await answers[seat].get()
                if answer["type"] == "ack":
                    if sent >= measured_from:
                        latencies.append(time.perf_counter() - sent)
                        acks += 1
                    at = answer["version"]
                else:  # refused (a view the other seat made stale): choose again, once more is shown
                    refusals[answer.get("code", "?")] = refusals.get(answer.get("code", "?"), 0) + 1
                    seen.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(seen.wait(), 0.05)
            for ws in sockets:
                await ws.close()
            for reader in readers:
                reader.cancel()

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(table(session, index) for index in range(games)))
        ended = time.perf_counter()
    started = measured_from
    return {
        "per_s": acks / (ended - started),
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "n": acks,
        "window": (started, ended),
        "refusals": refusals,
    }


_DRIVERS: dict[str, Callable[..., Coroutine[Any, Any, dict[str, Any]]]] = {
    "throughput": _throughput, "paced": _paced, "fanout": _fanout, "real_games": _real_games
}


def _drive(kind: str, base: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run one load generator to its end, on a uvloop event loop as ``donjon serve`` runs (the
    load shares the machine's cores with the service: the less it spends, the more they get)."""
    from service.run.serving import run

    _raise_fd_limit()
    return run(_DRIVERS[kind](base, **params))


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- the measured service ----------------------------------------------------------------------------


async def service_figures(quick: bool = False, fsync: FsyncMode = "always") -> dict[str, str]:
    """Run the service on an embedded server in a temp folder and drive it from a child process."""
    from aiohttp import web

    from events.embedded import EmbeddedServer
    from service.edge.keys import METRICS
    from service.ops.settings import Secret, Settings
    from service.run.app import create_app
    from service.run.serving import settle_gc

    _raise_fd_limit()
    seconds = 2.0 if quick else 6.0
    figures: dict[str, str] = {}
    collector = gc.get_threshold()
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        server = EmbeddedServer(folder, fsync=fsync)
        await server.start_async()
        runner = None
        try:
            settings = Settings(
                redis_url=Secret(server.url), ws_rate=1e9, ws_burst=1e9, ws_outbox=100_000, log_level="warning"
            )
            import games as registry

            app = create_app(settings, engines={"bench": BENCH, **registry.default_engines()})
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            port = _free_port()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            base = f"http://127.0.0.1:{port}"
            loop = asyncio.get_running_loop()
            context = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:

                async def drive(kind: str, **params: Any) -> dict[str, Any]:
                    return await loop.run_in_executor(pool, _drive, kind, base, params)

                await drive("throughput", games=10, seconds=0.5)  # warm up the child and the server
                settle_gc()  # as `donjon serve` does once started
                store_pid = server.pid
                samples: list[tuple[float, float, float]] = []
                sampler = asyncio.create_task(_sample_cpu(samples, store_pid))
                result = await drive("throughput", games=100, seconds=seconds)
                python, store = _cpu_per_command(samples, result)
                figures["service: accepted commands/s (1 process, 100 games, closed loop)"] = f"{result['per_s']:,.0f}"
                figures["service: command->ack p50 / p99 at that load"] = _ms(result)
                figures["service: server CPU per accepted command (service + store)"] = _cpu_text(python, store)
                for game in ("castle_panic", "carcassonne"):
                    result = await drive("real_games", game=game, games=50, seconds=seconds)
                    python, store = _cpu_per_command(samples, result)
                    figures[f"service: {game}, 50 games x 2 seats from legal: commands/s; CPU per command"] = (
                        f"{result['per_s']:,.0f}; {_cpu_text(python, store)}; refused {result['refusals'] or 'none'}"
                    )
                sampler.cancel()
                result = await drive("paced", games=100, rate=1000, seconds=seconds)
                figures["service: command->ack p50 / p99 at 1,000 commands/s"] = _ms(result)
                result = await drive("paced", games=100, rate=500, seconds=seconds)
                figures["service: command->ack p50 / p99 at 500 commands/s"] = _ms(result)
                publish = app[METRICS].publish_seconds
                loads = ((10, 100, "10 games x 100 spectators"), (1, 1000, "1 game x 1,000 spectators"))
                for games, spectators, label in loads:
                    with _recording(publish) as server_side:
                        result = await drive(
                            "fanout", games=games, spectators=spectators, rate_per_game=5, seconds=seconds
                        )
                    where = "at the spectators' sockets" if result["kernel_stamps"] else "read by the client"
                    figures[f"service: command->spectator update p50 / p99 ({label}), {where}"] = _ms(result)
                    figures[f"service:   the same, stamped when read by one client process ({label})"] = (
                        f"{result['read_p50'] * 1e3:.1f} / {result['read_p99'] * 1e3:.1f} ms"
                    )
                    figures[f"service:   server side: fold + encode + write to every socket, p50 / p99 ({label})"] = (
                        f"{percentile(server_side, 50) * 1e3:.1f} / {percentile(server_side, 99) * 1e3:.1f} ms "
                        f"(n={len(server_side)})"
                    )
        finally:
            if runner is not None:
                await runner.cleanup()
            await asyncio.to_thread(server.stop)
            gc.unfreeze()  # the next sections measure without the served app's settings
            gc.set_threshold(*collector)
    figures["service: store fsync"] = fsync
    return figures


async def _sample_cpu(samples: list[tuple[float, float, float]], store_pid: int | None) -> None:
    """(wall, this process's CPU, the store's CPU) every 20 ms, to charge the service only for
    a measured window."""
    while True:
        samples.append((time.perf_counter(), time.process_time(), process_cpu(store_pid)))
        await asyncio.sleep(0.02)


def _cpu_at(samples: Sequence[tuple[float, ...]], at: float, column: int = 1) -> float:
    """A CPU column of the samples at wall time ``at``, interpolated between samples."""
    for s0, s1 in itertools.pairwise(samples):
        (t0, c0), (t1, c1) = (s0[0], s0[column]), (s1[0], s1[column])
        if t0 <= at <= t1:
            return c0 + (c1 - c0) * (at - t0) / (t1 - t0) if t1 > t0 else c0
    if not samples:
        return 0.0
    return samples[-1][column] if at > samples[-1][0] else samples[0][column]


def _cpu_per_command(samples: list[tuple[float, float, float]], result: dict[str, Any]) -> tuple[float, float]:
    """Seconds of CPU per accepted command over the driver's window: (the service, the store)."""
    started, ended = result["window"]
    n = max(1, result["n"])
    python, store = ((_cpu_at(samples, ended, column) - _cpu_at(samples, started, column)) / n for column in (1, 2))
    return python, store


def _cpu_text(python: float, store: float) -> str:
    return f"{(python + store) * 1e6:,.0f} us (service {python * 1e6:,.0f} + store {store * 1e6:,.0f})"


@contextlib.contextmanager
def _recording(histogram: Any) -> Iterator[list[float]]:
    """Every value ``histogram`` observes meanwhile, exactly: its buckets are too coarse for the
    p99 of a few dozen fan-outs."""
    values: list[float] = []
    observe = histogram.observe

    def record(value: float, **labels: str) -> None:
        values.append(value)
        observe(value, **labels)

    histogram.observe = record
    try:
        yield values
    finally:
        del histogram.observe


def _ms(result: dict[str, Any]) -> str:
    return f"{result['p50'] * 1e3:.1f} / {result['p99'] * 1e3:.1f} ms (n={result['n']:,})"


async def replay_figures(engines: Mapping[str, Any], quick: bool = False) -> dict[str, str]:
    """Play random legal games of each real engine through the command path, then replay them."""
    from events.embedded import EmbeddedServer
    from events.store import EventStore
    from service.fairness.replay import replay_game
    from service.play.game_service import GameService

    figures: dict[str, str] = {}
    games_each = 2 if quick else 10  # random games differ in cost (The Castle's folds by ~10 %)
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with EmbeddedServer(folder, fsync="everysec") as server:
            store = await EventStore.connect(server.url)
            try:
                service = GameService(store, engines)
                for name in sorted(engines):
                    engine = engines[name]
                    seats = min(max(2, engine.min_seats), engine.max_seats)
                    events = seconds = 0.0
                    checked = True
                    for index in range(games_each):
                        game_id = await _play_random(service, name, seats, random.Random(index))
                        # `donjon replay` runs in a fresh process: collect the garbage that playing
                        # left here, or one full collection lands inside the timed fold.
                        gc.collect()
                        report = await replay_game(store, game_id, engines)
                        checked = checked and report.ok
                        events += report.version
                        seconds += report.fold_seconds
                    figures[f"replay: {name} fold events/s"] = (
                        f"{events / seconds:,.0f} ({events / games_each:.0f} events/game, "
                        f"re-run {'OK' if checked else 'MISMATCH'})"
                    )
            finally:
                await store.close()
    return figures


async def bot_figures(engines: Mapping[str, Any], quick: bool = False) -> dict[str, str]:
    """Bot-only games driven by the service's bot path (decide, append with fsync always, one
    task per game): bot moves/s with each game's bots, and the worst event-loop lag meanwhile."""
    from events.embedded import EmbeddedServer
    from events.store import EventStore
    from service.play.game_service import GameService

    figures: dict[str, str] = {}
    concurrent = 3 if quick else 10
    with tempfile.TemporaryDirectory(prefix="donjon-bench-") as folder:
        async with EmbeddedServer(folder, fsync="always") as server:
            store = await EventStore.connect(server.url)
            service = GameService(store, engines)
            try:
                for name in sorted(engines):
                    engine = engines[name]
                    seats = min(max(2, engine.min_seats), engine.max_seats)
                    for bot in service.bot_names(name):
                        games = 1 if bot != "random" else concurrent
                        moves, seconds, lag = await _bot_games(service, name, bot, seats, games)
                        figures[f"bots: {name} {bot} x{games} game(s) at once, bot moves/s"] = (
                            f"{moves / seconds:,.0f} ({moves / games:.0f} moves/game; loop lag max {lag * 1e3:.1f} ms)"
                        )
            finally:
                await service.close()
                await store.close()
    return figures


async def _bot_games(service: Any, name: str, bot: str, seats: int, games: int) -> tuple[float, float, float]:
    """Run ``games`` bot-only games at once; (bot moves, seconds, worst loop lag in seconds)."""
    lags: list[float] = [0.0]

    async def probe() -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            lags.append(time.perf_counter() - before - 0.005)

    moves_before = service.metrics.bot_moves.value(game=name, bot=bot)
    probing = asyncio.create_task(probe())
    started = time.perf_counter()
    ids = []
    for _ in range(games):
        projection = await service.create_game(name, {}, seats, {str(s): bot for s in range(seats)}, True)
        ids.append(projection.game_id)
    # The bots' games end on their own; polling the cache costs the bench nothing it measures.
    while any((p := service.cached(g)) is None or p.status.value != "finished" for g in ids):  # noqa: ASYNC110
        await asyncio.sleep(0.005)
    seconds = time.perf_counter() - started
    probing.cancel()
    return service.metrics.bot_moves.value(game=name, bot=bot) - moves_before, seconds, max(lags)


async def _play_random(service: Any, name: str, seats: int, rng: random.Random) -> str:
    projection = await service.create_game(name, {}, seats)
    game_id = projection.game_id
    for seat in range(seats):
        await service.take_seat(game_id, f"bot{seat}")
    projection = await service.load(game_id)
    engine = projection.engine
    step = 0
    while projection.status.value == "active":
        movers = [(seat, engine.legal_moves(projection.state, seat)) for seat in range(seats)]
        movers = [(seat, legal) for seat, legal in movers if legal]
        seat, legal = rng.choice(movers)
        step += 1
        await service.execute(game_id, seat, f"b{step}", rng.choice(legal))
        projection = await service.load(game_id)
    return game_id


class _TimedLegal:
    """An engine whose ``legal_moves`` calls are counted and timed; the rest passes through."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.calls = 0
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def legal_moves(self, state: Any, seat: int) -> list[dict[str, Any]]:
        before = time.perf_counter()
        legal = self.engine.legal_moves(state, seat)
        self.seconds += time.perf_counter() - before
        self.calls += 1
        return legal


class _RandomLegal:
    """A bot of any engine, by the Engine surface alone: a uniformly random legal command."""

    name = "random-legal"

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def choose(self, state: Any, seat: int, rng: Rng) -> dict[str, Any]:
        return rng.choice(self.engine.legal_moves(state, seat))


def engine_figures(engines: Mapping[str, Any], quick: bool = False) -> dict[str, str]:
    """For every engine, using only the Engine surface: random-legal games/s and mean legal_moves
    time. Games are :func:`games.base.play_out` with a random-legal bot in every seat and one
    ``donjon-draw-1`` stream per game (``play_out``'s int seed) for every draw (a per-command
    stream costs as much as a light engine's command); ``legal_moves`` is timed both where it finds the seat that owes a
    command and where the bot lists its choices."""
    from games.base import play_out

    figures: dict[str, str] = {}
    budget = 1.0 if quick else 4.0
    for name in sorted(engines):
        timed = _TimedLegal(engines[name])
        seats = min(max(2, timed.min_seats), timed.max_seats)
        bot = _RandomLegal(timed)
        played = commands = 0
        started = time.perf_counter()
        while time.perf_counter() - started < budget or played == 0:
            _, moves = play_out(timed, seats, {}, bot, played)
            commands += len(moves)
            played += 1
        elapsed = time.perf_counter() - started
        figures[f"engine: {name} random-legal games/s ({seats} seats)"] = (
            f"{played / elapsed:,.1f} ({commands / played:.0f} commands/game)"
        )
        figures[f"engine: {name} legal_moves mean"] = f"{timed.seconds / max(timed.calls, 1) * 1e6:,.0f} us"
    return figures
