"""The bot scheduler: which node makes a bot's move, and when.

Whenever a bot seat owes a command, the node that appended the last event decides the bot's
command (with ``bot_rng(projection, seed, seat)``) and appends it like any command, recorded in
the envelope, with the command id ``bot:<seat>:<v>``: two nodes racing to make the same bot move
decide the same command under the same id on the same expected version, so the store applies it
once. A node that loses such a race steps back. Any other node that sees a bot's move overdue by
``DONJON_BOT_TAKEOVER_MS`` (through its stream reader, or when it loads the game, as after a
restart) makes it; a game moved by someone else in the meantime is left to them. One task per
game and node drives its bots, a move at a time under the game's lock, pausing
``DONJON_BOT_DELAY_MS`` (at least one event-loop turn) between moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from events.errors import ConflictError, StoreUnavailable
from games.base import Bot
from projections.game import GameProjection, Status
from service.bots import bot_command_id, bot_rng, due_bot
from service.cache import GameCache
from service.commands import decide
from service.errors import ErrorCode, ServiceError
from service.logs import get_logger
from service.metrics import Metrics

__all__ = ["BotScheduler"]

_BACKOFF_START = 0.05
_BACKOFF_MAX = 2.0


@dataclass(slots=True)
class _BotTask:
    """A game's bot task on this node: it either drives (makes the owed bot moves now) or
    watches (waits until a move is overdue, then drives unless the game moved meanwhile)."""

    task: asyncio.Task[None]
    driving: bool
    expect: int | None = None
    """While driving: the version the game is at if only this node appended since the
    driver's last look; anything else means another node moved the game."""


class BotScheduler:
    """Drives the bots of the games this node serves: one task per game that has a bot owing."""

    def __init__(
        self,
        cache: GameCache,
        bots: Mapping[str, Mapping[str, Bot]],
        metrics: Metrics,
        *,
        clock: Callable[[], int],
        delay: float = 0.0,
        takeover: float = 3.0,
    ) -> None:
        self.cache = cache
        self.bots = bots
        """Game -> the bots it offers, by name."""
        self.metrics = metrics
        self.clock = clock
        self.delay = delay
        self.takeover = takeover
        self._tasks: dict[str, _BotTask] = {}
        """Game -> its bot task on this node."""
        self._failed: dict[str, int] = {}
        """Game -> the version at which its bot failed (logged); not retried at that version."""
        self._closed = False
        self.log = get_logger()

    async def close(self) -> None:
        """Stop every bot task (an append in flight is atomic: it lands whole or not at all)."""
        self._closed = True
        tasks = [entry.task for entry in self._tasks.values()]
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def forget(self, game_id: str) -> None:
        """The cache forgot the game: so does the record of its failed bot."""
        self._failed.pop(game_id, None)

    def watch(self, projection: GameProjection) -> None:
        """A bot of this game may owe a move that another node should make: make it here if it
        is still owed once overdue (the node's reader and a fresh load call this)."""
        self.kick(projection, now=False)

    def appended(self, projection: GameProjection) -> None:
        """This node appended the game's last event: its bots, if one owes a move, move now."""
        self.kick(projection, now=True)

    def kick(self, projection: GameProjection, *, now: bool) -> None:
        """See that a bot owing a command gets to move: at once (``now``: this node appended
        the last event), else once the move is overdue, unless the game has moved by then.

        Called with the game's lock held (or on a game no one else knows yet), so a driver seen
        here has not yet decided, under the lock, that nothing is owed: it will look again.
        """
        if self._closed or not projection.has_bots or projection.status is not Status.ACTIVE:
            return
        game_id = projection.game_id
        if self._failed.get(game_id) == projection.version:
            return
        entry = self._tasks.get(game_id)
        if entry is not None and not entry.task.done():
            if entry.driving:
                if now:
                    entry.expect = projection.version  # this node's append, not a rival's
                return
            if not now:
                return
            entry.task.cancel()  # a watch; this node drives now
        if due_bot(projection.engine, projection.state, projection.bots) is None:
            return
        watched = None if now else projection.version
        task = asyncio.create_task(self._drive(game_id, watched), name=f"donjon-bots-{game_id}")
        self._tasks[game_id] = _BotTask(task, driving=now, expect=projection.version if now else None)

    def _forget_task(self, game_id: str, task: asyncio.Task[Any] | None) -> None:
        entry = self._tasks.get(game_id)
        if entry is not None and entry.task is task:
            del self._tasks[game_id]

    def _overdue_in(self, projection: GameProjection | None) -> float:
        """Seconds until a bot move owed since the last event counts as overdue (0: already).

        Each node adds up to half the delay again at random, so nodes that all see the same
        overdue move rarely all reach for it at once."""
        waited = 0.0 if projection is None else max(0.0, (self.clock() - projection.last_ts) / 1000)
        return max(0.0, self.takeover - waited) + random.uniform(0.0, self.takeover / 2)

    async def _drive(self, game_id: str, watched: int | None) -> None:
        """Make the bot moves owed in ``game_id``, one per turn of the loop, until a human owes
        the next command or the game ends.

        With ``watched`` (a version) the task first watches: it waits until the move is overdue
        and leaves the game to others if it moved past ``watched`` meanwhile. A driver that
        finds the game moved by another node (it lost a race for a move, or the game changed
        during its pause) goes back to watching: that node drives now.
        """
        me = asyncio.current_task()
        backoff = _BACKOFF_START
        pause = False
        try:
            while not self._closed:
                if watched is not None:
                    await asyncio.sleep(self._overdue_in(self.cache.cached(game_id)))
                elif pause:
                    await asyncio.sleep(self.delay)  # also yields to the loop between moves
                pause = True
                try:
                    async with self.cache.lock(game_id):
                        entry = self._tasks.get(game_id)
                        if entry is None or entry.task is not me:
                            return  # replaced by a driver of this node's own
                        projection = await self.cache.load(game_id)
                        if watched is not None:
                            if projection.version != watched:
                                self._forget_task(game_id, me)  # whoever moved it drives its bots
                                return
                            self.log.info("bot.takeover", game_id=game_id, version=projection.version)
                            watched = None
                        elif entry.expect is not None and projection.version != entry.expect:
                            watched, entry.driving = projection.version, False  # another node moved it
                            continue
                        entry.driving = True
                        due = due_bot(projection.engine, projection.state, projection.bots)
                        if due is None or projection.status is not Status.ACTIVE:
                            self._forget_task(game_id, me)
                            return
                        after = await self.move(projection, *due)
                        if after is not None:
                            entry.expect = after
                        else:
                            # Another writer appended first, so it drives; watch in case it dies.
                            watched, entry.driving = (await self.cache.load(game_id)).version, False
                except StoreUnavailable as exc:
                    self.metrics.store_unavailable.inc()
                    self.log.warning("bot.store_unavailable", game_id=game_id, error=str(exc))
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, _BACKOFF_MAX)
                    continue
                backoff = _BACKOFF_START
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bot or engine bug, or a game gone: log it, leave the game be
            cached = self.cache.cached(game_id)
            if cached is not None:
                self._failed[game_id] = cached.version
            self.log.error("bot.failed", game_id=game_id, error=repr(exc), exc_info=True)
        finally:
            self._forget_task(game_id, me)

    async def move(self, projection: GameProjection, seat: int, name: str) -> int | None:
        """Decide and append the move of the bot ``name`` in ``seat``: the version after it, or
        ``None`` when another writer appended first (the same bot move, or anything else)."""
        game_id = projection.game_id
        meta = await self.cache.meta(game_id)
        bot = self.bots.get(projection.game, {}).get(name)
        if bot is None:
            raise ServiceError(
                ErrorCode.INTERNAL, f"seat {seat} of game {game_id!r} is bot {name!r}, which this service lacks"
            )
        command = bot.choose(projection.state, seat, bot_rng(projection, meta.seed, seat))
        command_id = bot_command_id(seat, projection.version)
        batch = decide(projection, seat, command, meta, ts=self.clock(), command_id=command_id)
        try:
            _, after = await self.cache.commit(projection, batch)
        except ConflictError:
            self.metrics.bot_races_lost.inc()
            return None
        if after is None:
            self.metrics.bot_races_lost.inc()
            return None
        self.metrics.bot_moves.inc(game=after.game, bot=name)
        self.log.info("bot.moved", game_id=game_id, seat=seat, bot=name, command_id=command_id, version=after.version)
        return after.version
