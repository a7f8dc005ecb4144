"""The node's clock keeper: fires the turn clocks' deadlines, on whichever node is up.

Each append of a game with a clock records the game's next deadline in the store
(:mod:`events.deadlines`), or removes it while the clocks are paused or the game is over. Every
node runs one keeper task that sleeps until the earliest deadline of any game (at most
``poll`` seconds, so a deadline another node recorded is seen), then, for each game due, folds
it and asks :func:`service.play.decisions.expired_seat` whether a seat's time has run out at the
keeper's clock. If so it appends the timeout batch (:func:`service.play.decisions.timeout_batch`:
``clock.expired`` and its consequence) with the version it decided on as the expected version
and the command id ``timeout:<seat>:<version>``: a move that landed first makes the append
conflict (the move won; the keeper looks again), and two keepers firing the same deadline append
it once. A late move that comes after the deadline is refused (``clock_expired``) by the command
path, so a move and a timeout can never both win. Nothing is kept in memory: after a full
restart the deadlines are still in the store, and the first keeper up fires them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping

from events import deadlines
from events.errors import ConflictError, StoreUnavailable
from events.tasks import stop_task
from games.base import Bot, Command
from projections.game import GameProjection, Status
from service.bots import bot_rng
from service.errors import ServiceError
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.play import decisions
from service.play.cache import GameCache

__all__ = ["ClockKeeper", "timeout_command_id"]


def timeout_command_id(seat: int, version: int) -> str:
    return f"timeout:{seat}:{version}"


class ClockKeeper:
    """Fires the deadlines of every node's clocked games from this node."""

    def __init__(
        self,
        cache: GameCache,
        bots: Mapping[str, Mapping[str, Bot]],
        metrics: Metrics,
        *,
        clock: Callable[[], int],
        poll: float = 1.0,
    ) -> None:
        self.cache = cache
        self.store = cache.store
        self.bots = bots
        self.metrics = metrics
        self.clock = clock
        self.poll = poll
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._writes: set[asyncio.Task[None]] = set()
        self._closed = False
        self.log = get_logger()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="donjon-clock-keeper")

    async def stop_firing(self) -> None:
        """Fire no more timeouts here (a draining node): other nodes fire them, since every node
        reads the store's deadline index; this one still records the deadlines of its last appends."""
        task, self._task = self._task, None
        await stop_task(task)

    async def close(self) -> None:
        # The flag, not only the cancel: a cancel that lands inside a store call may come back
        # as a store error, which the loop would otherwise sleep off and go on.
        self._closed = True
        task, self._task = self._task, None
        for item in [*self._writes, *([task] if task else [])]:
            await stop_task(item)  # cancels again while redis-py swallows it (events.tasks)

    # --- recording deadlines ----------------------------------------------------------------

    def appended(self, projection: GameProjection) -> None:
        """A batch of a game was appended or loaded here: record its next deadline."""
        if self._closed or projection.features.clock is None or not projection.started:
            return
        write = asyncio.ensure_future(self._record(projection))
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)

    async def _record(self, projection: GameProjection) -> None:
        clock = projection.clock
        deadline = clock.deadline if clock is not None and projection.status is Status.ACTIVE else None
        try:
            if deadline is None:
                await deadlines.disarm(self.store, projection.game_id)
            else:
                await deadlines.arm(self.store, projection.game_id, deadline)
                self._wake.set()
        except StoreUnavailable as exc:  # the keeper's fold repairs it when the game is next due or loaded
            self.log.warning("clock.record_failed", game_id=projection.game_id, error=str(exc))

    # --- firing ------------------------------------------------------------------------------

    async def _run(self) -> None:
        while not self._closed:
            try:
                await self._sleep_until_due()
                for game_id in await deadlines.due(self.store, self.clock()):
                    await self.fire(game_id)
            except asyncio.CancelledError:
                raise
            except StoreUnavailable as exc:
                self.log.warning("clock.store_unavailable", error=str(exc))
                await asyncio.sleep(self.poll)
            except Exception as exc:  # a bug: log it, keep the keeper alive
                self.log.error("clock.failed", error=repr(exc), exc_info=True)
                await asyncio.sleep(self.poll)

    async def _sleep_until_due(self) -> None:
        earliest = await deadlines.earliest(self.store)
        wait = self.poll if earliest is None else min(self.poll, max(0.0, (earliest - self.clock()) / 1000))
        self._wake.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._wake.wait(), wait)

    async def fire(self, game_id: str) -> bool:
        """Append the game's timeout if a seat's time has run out now; True when this node did."""
        async with self.cache.lock(game_id):
            for _attempt in range(3):
                try:
                    projection = await self.cache.load(game_id)
                except ServiceError as exc:  # a game gone from the store (or one this node does not serve)
                    self.log.warning("clock.unknown_game", game_id=game_id, error=exc.message)
                    await deadlines.disarm(self.store, game_id)
                    return False
                seat = decisions.expired_seat(projection, self.clock())
                if seat is None:
                    await self._record(projection)  # moved meanwhile, or early: the true deadline
                    return False
                try:
                    if await self._append_timeout(projection, seat):
                        return True
                except ConflictError:
                    continue  # a move or another keeper came first: look again
            return False

    async def _append_timeout(self, before: GameProjection, seat: int) -> bool:
        meta = await self.cache.meta(before.game_id)
        options = meta.full_options(before)
        offered = self.bots.get(before.game, {})
        takeover = decisions.takeover_bot(list(offered))

        def bot_choice() -> Command:
            assert takeover is not None
            rng = bot_rng(before, meta.seed, seat, version=before.version + 1)
            return offered[takeover].choose(before.state, seat, rng)

        move = decisions.timeout_move(before, seat, None if takeover is None else bot_choice)
        events = decisions.timeout_batch(before, seat, seed=meta.seed, options=options, move=move, takeover=takeover)
        batch = decisions.Batch(
            before.game_id,
            events,
            before.version,
            self.clock(),
            command=decisions.timeout_command(seat, move),
            command_id=timeout_command_id(seat, before.version),
        )
        _, after = await self.cache.commit(before, batch, lobby_changed=True)
        if after is None:
            return False
        self.log.info(
            "clock.expired",
            game_id=before.game_id,
            seat=seat,
            version=after.version,
            on_timeout=before.features.on_timeout,
        )
        return True
