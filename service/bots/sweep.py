"""The due-bots sweep: bot games nobody drives are found in the store and resumed.

The stream reader re-arms a node's takeover watch on every version of the games it follows
(:mod:`service.bots.scheduler`), but after a full restart no node follows anything. So every
node looks, every ``DONJON_BOT_SWEEP_MS`` (with some jitter), at the games the due-bots index
(:mod:`events.due`) has listed for longer than the takeover delay, oldest first and a bounded
number at a time, and for each that no bot task of this node already has:

* a game that owes no bot move (a human's turn now, finished, or an append that never landed)
  has its lobby entry repaired if a lobby write after its last append failed (the listings
  list a game before every append whose lobby write must follow, :mod:`service.play.listings`), and is
  unlisted, unless someone listed it again meanwhile;
* a game whose bot move is overdue gets this node's takeover watch, which makes the move;
* a game a draining node handed over (listed since :data:`HANDED_OVER`, the epoch) gets a
  driver at once, whether or not this node was watching it, and an ordinary listing again;
* any other game (it moved recently, or its bot cannot move here) has its listing moved to
  now, so it is looked at again later and the oldest listings never starve the rest.

Every node sweeps; racing nodes make a bot move at most once (its command id), as always.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

from events.errors import StoreUnavailable
from events.protocol import DueBotsIndex
from events.tasks import stop_task
from service.bots import owes_bot
from service.bots.scheduler import BotScheduler
from service.errors import ErrorCode, ServiceError
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.play.cache import GameCache
from service.play.listings import Listings

__all__ = ["HANDED_OVER", "DueBotsSweep"]

HANDED_OVER = 0.0
"""The listing time of a game whose driver drained (:meth:`GameService.release_duty`): the
next sweep of any node drives it at once, without waiting for the takeover delay."""

SWEEP_LIMIT = 200
"""Listings looked at per sweep, so one sweep's work stays bounded however many games wait."""


class DueBotsSweep:
    """One node's periodic look at the due-bots index."""

    def __init__(
        self,
        listings: Listings,
        cache: GameCache,
        scheduler: BotScheduler,
        metrics: Metrics,
        *,
        clock: Callable[[], int],
        period: float,
        limit: int = SWEEP_LIMIT,
    ) -> None:
        self.listings = listings
        self.due: DueBotsIndex = listings.due
        self.cache = cache
        self.scheduler = scheduler
        self.metrics = metrics
        self.clock = clock
        self.period = period
        self.limit = limit
        self._task: asyncio.Task[None] | None = None
        self.log = get_logger()

    def start(self) -> None:
        """Sweep in the background (``period`` 0: never)."""
        if self.period > 0 and self._task is None:
            self._task = asyncio.create_task(self._run(), name="donjon-due-bots-sweep")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_task(task)  # cancels again while redis-py swallows it (events.tasks)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.period * random.uniform(0.5, 1.0))
            try:
                await self.sweep()
            except StoreUnavailable as exc:
                self.metrics.store_unavailable.inc()
                self.log.warning("bots.sweep_store_unavailable", error=str(exc))
            except Exception as exc:  # a bug: log it, keep sweeping
                self.log.error("bots.sweep_failed", error=repr(exc))

    async def sweep(self) -> int:
        """One look at the listings older than the takeover delay; how many games got a watch."""
        takeover_ms = int(self.scheduler.takeover * 1000)
        resumed = 0
        for game_id, since in await self.due.due(self.clock() - takeover_ms, self.limit):
            handed_over = since == HANDED_OVER
            if self.scheduler.driving(game_id) or (self.scheduler.busy(game_id) and not handed_over):
                continue
            resumed += await self._look(game_id, since)
        return resumed

    async def _look(self, game_id: str, since: float) -> int:
        """Resume, unlist or postpone one listed game; 1 when it got a watch (or, for a game a
        draining node handed over, a driver at once)."""
        try:
            meta = await self.cache.meta(game_id)
            if meta.game not in self.cache.engines:
                await self.due.bump(game_id, self.clock())  # another node's game to move
                return 0
            async with self.cache.lock(game_id):
                projection = await self.cache.load(game_id)
                if not owes_bot(projection):
                    await self.listings.repair(projection)
                    await self.due.drop(game_id, since)
                    return 0
                if since == HANDED_OVER:
                    self.scheduler.kick(projection, now=True)
                    await self.due.bump(game_id, self.clock())  # taken: an ordinary listing again
                    self.log.info("bots.taken_over", game_id=game_id, version=projection.version)
                    return 1
                if self.scheduler.overdue(projection):
                    self.scheduler.watch(projection)
                    if self.scheduler.busy(game_id):
                        self.log.info("bots.resumed", game_id=game_id, version=projection.version)
                        return 1
        except ServiceError as exc:
            if exc.code != ErrorCode.NOT_FOUND.value:
                raise
            await self.due.drop(game_id, since)  # listed by a creation whose append never landed
            return 0
        await self.due.bump(game_id, self.clock())
        return 0
