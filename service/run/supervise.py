"""The node keeps its embedded store alive: a ``valkey-server`` that dies (killed, crashed) is
started again on the same data folder, at the same address, and the node is ready again in
seconds (the store's clients reconnect by themselves; every acknowledged event is in the
append-only file). A store that keeps dying is not restarted for ever: after
:data:`MAX_RESTARTS` deaths within :data:`WINDOW` seconds, or a restart that fails, the node
stops with :data:`GAVE_UP` (a supervisor, systemd or Kubernetes, starts it afresh and someone
reads the store's log).

``donjon serve`` with one process watches from its event loop (:func:`watch_embedded`); with
several workers the supervisor process that owns the store watches it between its other checks
(:mod:`service.run.workers`); both count deaths with one :class:`RestartBudget`.

>>> budget = RestartBudget(max_restarts=2, window=60.0)
>>> budget.died(0.0), budget.died(10.0), budget.died(20.0)
(True, True, False)
>>> RestartBudget(max_restarts=2, window=60.0).died(0.0)
True
"""

from __future__ import annotations

import asyncio
import collections

from events.embedded import EmbeddedServer
from events.errors import StoreUnavailable
from service.ops.lifecycle import Lifecycle
from service.ops.logs import get_logger

__all__ = ["CHECK_EVERY", "GAVE_UP", "MAX_RESTARTS", "WINDOW", "RestartBudget", "watch_embedded"]

MAX_RESTARTS = 3
WINDOW = 60.0
"""Seconds over which store deaths are counted."""
CHECK_EVERY = 0.25
"""Seconds between two looks at the store's process (a look is a ``waitpid``, no command)."""
GAVE_UP = 70
"""The exit status of a node whose embedded store keeps dying (``EX_SOFTWARE``)."""

log = get_logger()


class RestartBudget:
    """How many times the store may die within a window and still be restarted."""

    def __init__(self, max_restarts: int = MAX_RESTARTS, window: float = WINDOW) -> None:
        self.max_restarts = max_restarts
        self.window = window
        self._deaths: collections.deque[float] = collections.deque()

    def died(self, now: float) -> bool:
        """Record a death at ``now`` (monotonic seconds); True when a restart is still allowed."""
        self._deaths.append(now)
        while self._deaths and self._deaths[0] < now - self.window:
            self._deaths.popleft()
        return len(self._deaths) <= self.max_restarts

    @property
    def spent(self) -> str:
        """Why the store is not restarted again, once :meth:`died` said no."""
        return f"the embedded store died {self.max_restarts + 1} times in {self.window:.0f} s"


async def watch_embedded(server: EmbeddedServer, life: Lifecycle, budget: RestartBudget | None = None) -> None:
    """Restart ``server`` each time it dies, until the budget runs out or a restart fails; then
    ask the node to stop with :data:`GAVE_UP`. Runs until cancelled."""
    budget = budget or RestartBudget()
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(CHECK_EVERY)
        status = server.exited
        if status is None:
            continue
        log.warning("embedded.died", status=status, data_dir=str(server.data_dir))
        if not budget.died(loop.time()):
            _give_up(life, budget.spent)
            return
        try:
            await server.restart_async()
        except (StoreUnavailable, OSError) as exc:
            _give_up(life, f"the embedded store did not start again: {exc}")
            return
        log.info("embedded.restarted", data_dir=str(server.data_dir), pid=server.pid)


def _give_up(life: Lifecycle, reason: str) -> None:
    log.error("embedded.gave_up", reason=reason, status=GAVE_UP)
    life.stop(GAVE_UP, reason)
