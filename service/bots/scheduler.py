"""The bot scheduler: which node makes a bot's move, and when.

Whenever a bot seat owes a command, the node that appended the last event decides the bot's
command (with ``bot_rng(projection, seed, seat)``) and appends it like any command, recorded in
the envelope, with the command id ``bot:<seat>:<v>``: two nodes racing to make the same bot move
decide the same command under the same id on the same expected version, so the store applies it
once. A node that loses such a race steps back. Any other node that sees a bot's move overdue by
``DONJON_BOT_TAKEOVER_MS`` makes it: its stream reader shows it every version of the games it
watches, and each one re-arms the watch, so the move owed after the last event is made whatever
the history before it; a node that only loaded the game (a request, or the due-bots sweep of
:mod:`service.bots.sweep`) makes the move overdue at the version it loaded and leaves a game
that moved on to its writers. One task per game and node drives its bots, a move at a time
under the game's lock, pausing ``DONJON_BOT_DELAY_MS`` (at least one event-loop turn) between
moves.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from events.errors import ConflictError, StoreUnavailable
from events.tasks import stop_task
from games.base import Bot
from projections.game import GameProjection, Status
from service.bots import bot_command_id, bot_rng, due_bot
from service.errors import ErrorCode, ServiceError
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.play.cache import GameCache
from service.play.commands import decide

__all__ = ["BotScheduler"]

_BACKOFF_START = 0.05
_BACKOFF_MAX = 2.0


@dataclass(slots=True)
class _BotTask:
    """A game's bot task on this node: it either drives (makes the owed bot moves now) or
    watches (waits until a move is overdue, then drives)."""

    task: asyncio.Task[None]
    driving: bool
    version: int
    """While driving: the version the game is at if only this node appended since the driver's
    last look; anything else means another node moved the game. While watching: the latest
    version this node was shown (by its stream reader or a load); a game found further on was
    moved by writers this node does not follow, and the due-bots sweep looks after it."""


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
            await stop_task(task)  # cancels again while redis-py swallows it (events.tasks)

    async def release(self) -> list[str]:
        """Stop every bot task and start no more (a draining node); the games whose bots this
        node drove or watched, for the caller to hand over."""
        games = list(self._tasks)
        await self.close()
        return games

    def forget(self, game_id: str) -> None:
        """The cache forgot the game: so does the record of its failed bot."""
        self._failed.pop(game_id, None)

    def busy(self, game_id: str) -> bool:
        """True while this node drives or watches the game's bots (the cache keeps such a game)."""
        entry = self._tasks.get(game_id)
        return entry is not None and not entry.task.done()

    def driving(self, game_id: str) -> bool:
        """True while this node drives the game's bots (not only watches them)."""
        entry = self._tasks.get(game_id)
        return entry is not None and entry.driving and not entry.task.done()

    def watch(self, projection: GameProjection) -> None:
        """A bot of this game may owe a move that another node should make: make it here if it
        is still owed once overdue (the node's reader calls this on every version it sees, and
        a fresh load on the version it found)."""
        self.kick(projection, now=False)

    def appended(self, projection: GameProjection) -> None:
        """This node appended the game's last event: its bots, if one owes a move, move now."""
        self.kick(projection, now=True)

    def kick(self, projection: GameProjection, *, now: bool) -> None:
        """See that a bot owing a command gets to move: at once (``now``: this node appended
        the last event), else once the move is overdue.

        A watch already running is re-armed at the new version: it looks again when a move
        owed since that version's event would be overdue, whatever came before. Called with
        the game's lock held, or from the stream reader: a task seen here has not yet decided
        (synchronously, right after its last load) that nothing is owed, so it looks again.
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
                    entry.version = projection.version  # this node's append, not a rival's
                return
            if not now:
                entry.version = max(entry.version, projection.version)
                return
            entry.task.cancel()  # a watch; this node drives now
        if due_bot(projection.engine, projection.state, projection.bots) is None:
            return
        task = asyncio.create_task(self._run(game_id), name=f"donjon-bots-{game_id}")
        self._tasks[game_id] = _BotTask(task, driving=now, version=projection.version)

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

    def overdue(self, projection: GameProjection) -> bool:
        """True when the game's last event is older than the takeover delay."""
        return self.clock() - projection.last_ts >= self.takeover * 1000

    async def _run(self, game_id: str) -> None:
        """Make the bot moves owed in ``game_id``, one per turn of the loop, until a human owes
        the next command or the game ends; or, while watching, wait until a move is overdue
        and then make it.

        A driver that finds the game moved by another node (it lost a race for a move, or the
        game changed during its pause) goes back to watching: that node drives now."""
        me = asyncio.current_task()
        backoff = _BACKOFF_START
        first = True
        try:
            while not self._closed:
                entry = self._tasks.get(game_id)
                if entry is None or entry.task is not me:
                    return  # replaced by a driver of this node's own
                if not entry.driving:
                    await asyncio.sleep(self._overdue_in(self.cache.cached(game_id)))
                elif not first:
                    await asyncio.sleep(self.delay)  # also yields to the loop between moves
                first = False
                try:
                    async with self.cache.lock(game_id):
                        if self._tasks.get(game_id) is not entry:
                            return
                        if not await self._turn(game_id, entry):
                            self._forget_task(game_id, me)
                            return
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

    async def _turn(self, game_id: str, entry: _BotTask) -> bool:
        """One look at the game, under its lock: make the owed bot move if this task should;
        ``False`` when the task has nothing more to do (no bot owes, or a watch lost track)."""
        projection = await self.cache.load(game_id)
        due = due_bot(projection.engine, projection.state, projection.bots)
        if due is None or projection.status is not Status.ACTIVE:
            return False
        if not entry.driving:
            if projection.version > entry.version:
                return False  # moved by writers this node does not follow
            if not self.overdue(projection):
                return True  # re-armed since: watch again from the latest event
            self.log.info("bot.takeover", game_id=game_id, version=projection.version)
            entry.driving = True
        elif projection.version != entry.version:
            entry.driving, entry.version = False, projection.version  # another node moved it
            return True
        after = await self.move(projection, *due)
        if after is None:
            # Another writer appended first, so it drives; watch in case it dies.
            entry.driving, entry.version = False, (await self.cache.load(game_id)).version
        else:
            entry.version = after
        return True

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
