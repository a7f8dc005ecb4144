"""Spectators' updates written together: one ``send`` per spectator per window under load.

Fanning one update out to a thousand spectators costs a thousand ``send`` system calls, each
the largest part of a spectator's cost (~5 us of the ~6 us per spectator per update). A
spectator does not need each update within a millisecond of the move, only every update, in
order, soon. So a spectator's socket writes an update at once when it wrote nothing in the last
``window`` seconds (an idle game loses no time), and otherwise keeps it back with any others that
follow, until one timer, shared by every spectator of the node, writes each socket's waiting
updates in one ``send``, at most ``window`` after the first of them. The bytes a spectator
receives are exactly the frames it would have received one by one, concatenated; only the
moment differs, by at most ``window`` (``DONJON_WS_SPECTATOR_BATCH_MS``, 0 to write every
update at once).

Seats are never batched: a player's own update leaves with its ack, the other seats' at once.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["Batched", "SpectatorBatch"]


class Batched(Protocol):
    """The side of :class:`service.edge.outbox.Connection` that a batch writes through."""

    batched: list[bytes] | None
    """The updates waiting for the window's end, oldest first; ``None`` when none waits."""
    wrote_at: float
    """``time.monotonic()`` of this socket's last batched or direct update write."""

    def write_batched(self, data: bytes, frames: int) -> None:
        """Write ``data`` (``frames`` whole frames) now, in order after everything written before."""


class SpectatorBatch:
    """The node's spectator sockets with updates waiting, and the one timer that writes them."""

    def __init__(self, window_s: float) -> None:
        self.window = window_s
        self._waiting: list[Batched] = []
        self._timer: asyncio.TimerHandle | None = None

    def keeps(self, socket: Batched, data: bytes) -> bool:
        """Whether ``data`` waits for the window's end (True) or is to be written now (False,
        and the socket's window starts now)."""
        if socket.batched is not None:
            socket.batched.append(data)
            return True
        now = time.monotonic()
        if now - socket.wrote_at >= self.window:
            socket.wrote_at = now
            return False
        socket.batched = [data]
        self._waiting.append(socket)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.window, self.write_waiting)
        return True

    def write_waiting(self) -> None:
        """Write every waiting socket's updates, each socket's in one write."""
        self._timer = None
        waiting, self._waiting = self._waiting, []
        now = time.monotonic()
        for socket in waiting:
            take_waiting(socket, now)


def take_waiting(socket: Batched, now: float | None = None) -> None:
    """Write ``socket``'s waiting updates now, if it has any (also before a direct reply, which
    must not overtake them, and before a deliberate close)."""
    frames, socket.batched = socket.batched, None
    if not frames:
        return
    socket.wrote_at = time.monotonic() if now is None else now
    socket.write_batched(frames[0] if len(frames) == 1 else b"".join(frames), len(frames))
