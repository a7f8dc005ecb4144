"""Every connection of one game to one worker (``DONJON_WORKER_ROUTING=game``, the default).

With ``SO_REUSEPORT`` the kernel spreads connections over the workers by their addresses, so the
two seats of a game and its spectators land on different workers: each worker folds the game
again, and the seats' commands race each other for the stream from two processes (expected-version
conflicts, retried). A router process does what a load balancer that routes by game does between
nodes (``deploy/haproxy.cfg``), between the workers of one node: it accepts each connection,
peeks at its request line without reading it (``MSG_PEEK``), and hands the socket itself to the
worker the game id hashes to (``SCM_RIGHTS`` over that worker's unix datagram socket); the worker
serves it as if it had accepted it. A request that names no game goes to the workers in turn.

The router never reads a byte of the stream and is out of the path once a socket is handed over,
so it costs one accept and one ``sendmsg`` per connection, not per message. A worker that is
down (killed, restarting) has its games handed to the next worker meanwhile: every worker serves
every game correctly; routing only saves work.
"""

from __future__ import annotations

import array
import asyncio
import hashlib
import re
import selectors
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from service.ops.logs import get_logger

__all__ = ["GAME_IN_PATH", "HandedSockets", "Router", "game_in", "worker_for"]

GAME_IN_PATH = re.compile(rb"^[A-Z]{3,7} /(?:app/)?games/([A-Za-z0-9_-]{1,64})(?:[/?# ]|$)")
"""The game id in a request line: ``/games/{id}...`` (the API and its socket) or ``/app/games/{id}``
(the web app's page)."""
PEEK_BYTES = 2048
"""Most of a request head the router looks at; a request line is far shorter."""
PARTIAL_POLL_S = 0.02
"""How often the router looks again at a connection that sent part of its request line."""
PEEK_WAIT_S = 5.0
"""How long a connection may stay silent before the router hands it over without a game."""


def game_in(head: bytes) -> str | None:
    """The game id the request line at the start of ``head`` names, if any.

    >>> game_in(b"GET /games/ab12/ws HTTP/1.1\\r\\n"), game_in(b"GET /app/games/x-1 HTTP/1.1\\r\\n")
    ('ab12', 'x-1')
    >>> game_in(b"POST /games HTTP/1.1\\r\\n") is None, game_in(b"GET /readyz HTTP/1.1\\r\\n") is None
    (True, True)
    """
    found = GAME_IN_PATH.match(head)
    return None if found is None else found.group(1).decode("ascii")


def worker_for(game_id: str, workers: int) -> int:
    """The worker a game's connections go to: a hash of its id, the same in every process.

    >>> worker_for("ab12", 2) == worker_for("ab12", 2)
    True
    """
    digest = hashlib.blake2b(game_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % workers


class Router:
    """Accepts on ``listener`` until ``stopping()`` and hands each connection to a worker:
    worker ``i`` takes them at ``channels[i]`` (:attr:`service.ops.scrape.WorkerPlace.route_socket`).

    A blocking loop of its own (``selectors``), run in its own process: no event loop, no
    threads, nothing shared with the workers but the listening socket and their unix sockets."""

    def __init__(self, listener: socket.socket, channels: Sequence[Path], stopping: Callable[[], bool]) -> None:
        self.listener = listener
        self.channels = [str(path) for path in channels]
        self.workers = len(channels)
        self.stopping = stopping
        self.log = get_logger()
        self._selector = selectors.DefaultSelector()
        self._waiting: dict[socket.socket, float] = {}
        """Accepted connections whose request line has not come yet -> when they were accepted."""
        self._partial: set[socket.socket] = set()
        """Those of them that sent part of it: looked at again every :data:`PARTIAL_POLL_S`
        instead of by the selector, which would report their unread bytes again at once."""
        self._channel = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._channel.settimeout(1.0)
        self._next = 0

    def run(self) -> int:
        self.listener.setblocking(False)
        self._selector.register(self.listener, selectors.EVENT_READ)
        self.log.info("router.started", workers=self.workers)
        try:
            while not self.stopping():
                for key, _ in self._selector.select(timeout=PARTIAL_POLL_S if self._partial else 0.2):
                    if key.fileobj is self.listener:
                        self._accept()
                    else:
                        self._peek(key.fileobj)  # type: ignore[arg-type]
                for conn in list(self._partial):
                    self._peek(conn)
                self._hand_over_the_silent()
        finally:
            for conn in list(self._waiting):
                self._drop(conn)
            self._selector.close()
            self._channel.close()
        self.log.info("router.stopped")
        return 0

    def _accept(self) -> None:
        for _ in range(64):  # a burst: take what is queued, then let the others' turn come
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors: the client will retry
                self.log.warning("router.accept_failed", error=str(exc))
                return
            conn.setblocking(False)
            self._waiting[conn] = time.monotonic()
            self._selector.register(conn, selectors.EVENT_READ)

    def _peek(self, conn: socket.socket) -> None:
        try:
            head = conn.recv(PEEK_BYTES, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        if not head:  # closed before it asked anything
            self._drop(conn)
        elif b"\n" in head or len(head) >= PEEK_BYTES:
            self._hand_over(conn, game_in(head))
        elif conn not in self._partial:  # the bytes peeked stay readable: the selector would spin on them
            self._selector.unregister(conn)
            self._partial.add(conn)

    def _hand_over_the_silent(self) -> None:
        """A connection silent for :data:`PEEK_WAIT_S` goes to a worker as it is (its own
        timeouts deal with a client that never speaks); the router holds nothing for long."""
        cutoff = time.monotonic() - PEEK_WAIT_S
        for conn in [conn for conn, since in self._waiting.items() if since < cutoff]:
            self._hand_over(conn, None)

    def _hand_over(self, conn: socket.socket, game_id: str | None) -> None:
        self._forget(conn)
        first = worker_for(game_id, self.workers) if game_id is not None else self._take_turn()
        try:
            for step in range(self.workers):  # the game's worker, else the next one that is up
                index = (first + step) % self.workers
                if self._send(conn, index):
                    return
            self.log.warning("router.no_worker", game_id=game_id)
        finally:
            conn.close()  # the worker holds its own descriptor of the socket now

    def _take_turn(self) -> int:
        self._next = (self._next + 1) % self.workers
        return self._next

    def _send(self, conn: socket.socket, index: int) -> bool:
        try:
            # sendmsg itself: socket.send_fds drops its address argument (CPython 3.11).
            rights = (socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [conn.fileno()]))
            self._channel.sendmsg([b"c"], [rights], 0, self.channels[index])
        except OSError as exc:  # that worker is down or not listening yet
            self.log.debug("router.worker_unreachable", worker=index, error=str(exc))
            return False
        return True

    def _drop(self, conn: socket.socket) -> None:
        self._forget(conn)
        conn.close()

    def _forget(self, conn: socket.socket) -> None:
        """Stop waiting for ``conn``'s request line (registered with the selector or partial)."""
        self._waiting.pop(conn, None)
        if conn in self._partial:
            self._partial.discard(conn)
        else:
            self._selector.unregister(conn)


class HandedSockets:
    """A worker's end: takes the sockets the router hands it and serves each with
    ``protocol_factory`` (aiohttp's ``AppRunner.server``), as if it had accepted it itself."""

    def __init__(self, path: Path, protocol_factory: Callable[[], Any]) -> None:
        self.path = path
        self.protocol_factory = protocol_factory
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._serving: set[asyncio.Task[None]] = set()
        """The hand-overs in progress (held, so the loop does not drop them)."""

    def start(self) -> None:
        self.path.unlink(missing_ok=True)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(str(self.path))
        sock.setblocking(False)
        self._sock = sock
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(sock.fileno(), self._take)

    def stop(self) -> None:
        """Take no more sockets (the drain); the router hands the next ones to another worker."""
        if self._sock is None or self._loop is None:
            return
        self._loop.remove_reader(self._sock.fileno())
        self._sock.close()
        self._sock = None
        self.path.unlink(missing_ok=True)

    def _take(self) -> None:
        assert self._sock is not None and self._loop is not None
        while True:
            try:
                _, fds, _, _ = socket.recv_fds(self._sock, 16, 16)
            except (BlockingIOError, InterruptedError):
                return
            for fd in fds:
                conn = socket.socket(fileno=fd)
                conn.setblocking(False)
                task = self._loop.create_task(self._serve(conn))
                self._serving.add(task)
                task.add_done_callback(self._serving.discard)

    async def _serve(self, conn: socket.socket) -> None:
        assert self._loop is not None
        try:
            await self._loop.connect_accepted_socket(self.protocol_factory, conn)
        except OSError:  # the client left while the socket was handed over
            conn.close()
