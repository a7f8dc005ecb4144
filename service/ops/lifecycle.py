"""The node's life after start: serving, draining, stopping, and the status it exits with.

One :class:`Lifecycle` per app. ``donjon serve`` (:mod:`service.run.serving`) waits on it: a
SIGTERM or SIGINT, or a part of the node that cannot go on (the embedded store that keeps dying,
:mod:`service.run.supervise`), asks it to stop; then the node drains (:mod:`service.run.drain`)
and exits with the status asked for. The edge reads :attr:`Lifecycle.draining` to answer
``/readyz`` 503 and refuse new games, seats and sockets while it drains.

>>> life = Lifecycle()
>>> life.draining, life.status
(False, 0)
>>> life.stop(70, "the embedded store keeps dying")
>>> life.stop(0, "SIGTERM")  # the first reason to stop is the one the node exits with
>>> life.status, life.reason
(70, 'the embedded store keeps dying')
"""

from __future__ import annotations

import asyncio

__all__ = ["Lifecycle"]


class Lifecycle:
    """Whether the node drains, and why and with which status it stops."""

    def __init__(self) -> None:
        self.draining = False
        """True from the moment the node is asked to stop: it takes no new work."""
        self.status = 0
        """The exit status of ``donjon serve`` (0 for a requested stop)."""
        self.reason = ""
        self._stop: asyncio.Event | None = None

    def stop(self, status: int, reason: str) -> None:
        """Ask the node to drain and stop; only the first request sets the status and reason."""
        if not self.draining:
            self.draining, self.status, self.reason = True, status, reason
        self._event().set()

    async def stopped(self) -> None:
        """Wait until the node is asked to stop."""
        await self._event().wait()

    def _event(self) -> asyncio.Event:
        # Made on first use, inside the loop that serves (an Event binds to the running loop).
        if self._stop is None:
            self._stop = asyncio.Event()
        return self._stop
