"""The node's stream reader: the only path from the event store to this node's sockets.

One task per node reads, in one ``XREAD`` (``store.read_many``), the streams of every game that
has a socket on this node, from the version last pushed for each. Whatever it gets is folded
by that game's :class:`~projections.live.LiveGame` and fanned out to the game's sockets; the
newer projection is offered to the command path's cache so the next command decides on it.
Because every node, including the one that took a command, pushes this same way, a command
taken on node A reaches spectators on node B exactly as it reaches its own sender. Each new
version is also shown to the command path's bot watch (``GameService.watch_bots``), so a bot
move that the appending node never makes (it died) is made here once overdue.

When the set of watched games changes, the blocking read in flight is cancelled and a new one
starts with the new set (redis-py drops the connection of a cancelled read, which is cheap).
A cancel can be lost, though: redis-py sends each command under ``asyncio.wait_for``, which on
Python 3.11 swallows a cancel that lands just as the send completes (CPython gh-86296, fixed in
3.12), and the read then blocks out its ``block_ms`` on the old set. So the reader waits for a
dropped read only briefly (``_CANCEL_GRACE``), reads on without it, and publishes whatever it
still brings when it ends (a publish takes only versions newer than the pushed one, so nothing
is shown twice).
When the store is unreachable, the reader backs off and retries; sockets stay open and receive
what they missed, in order, once it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from aiohttp import WSCloseCode

from events.errors import StoreUnavailable
from projections.live import LiveGame, Subscriber
from service.game_service import GameService
from service.logs import get_logger
from service.metrics import Metrics

__all__ = ["Node"]

_BACKOFF_START = 0.05
_CANCEL_GRACE = 0.02
"""Seconds a cancelled read may take to end; a read still running after that lost its cancel.
Each lost cancel costs the reader this pause, so at most ``block_ms / _CANCEL_GRACE`` such reads
hold a store connection at once."""
_BACKOFF_MAX = 2.0


class Node:
    """Live games on this node and the reader task that feeds them."""

    def __init__(self, store: Any, service: GameService, metrics: Metrics, *, block_ms: int = 1000) -> None:
        self.store = store
        self.service = service
        self.metrics = metrics
        self.block_ms = block_ms
        self.games: dict[str, LiveGame] = {}
        self._loading: dict[str, asyncio.Task[LiveGame]] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stragglers: set[asyncio.Future[dict[str, list[Any]]]] = set()
        self.log = get_logger()
        self.healthy = True

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="donjon-node-reader")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for pending in (*self._loading.values(), *self._stragglers):
            pending.cancel()

    # --- watching ------------------------------------------------------------------------------

    async def live_game(self, game_id: str) -> LiveGame:
        """The game's :class:`LiveGame`, loading it (once, however many sockets ask) if needed."""
        live = self.games.get(game_id)
        if live is not None:
            return live
        loading = self._loading.get(game_id)
        if loading is None:
            loading = asyncio.create_task(self._load(game_id))
            self._loading[game_id] = loading
            loading.add_done_callback(lambda _t: self._loading.pop(game_id, None))
        return await asyncio.shield(loading)

    async def _load(self, game_id: str) -> LiveGame:
        projection = await self.service.load(game_id)
        live = self.games.get(game_id)
        if live is None:
            live = self.games[game_id] = LiveGame(projection)
            self.metrics.games_watched.set(len(self.games))
            self._changed.set()
        return live

    def subscribe(self, live: LiveGame, subscriber: Subscriber) -> None:
        """Add a socket to a loaded game (synchronously, so no push slips in between)."""
        if self.games.get(live.game_id) is not live:
            self.games[live.game_id] = live
            self.metrics.games_watched.set(len(self.games))
            self._changed.set()
        live.add(subscriber)

    def unsubscribe(self, game_id: str, subscriber: Subscriber) -> None:
        live = self.games.get(game_id)
        if live is None:
            return
        live.discard(subscriber)
        if not len(live):
            del self.games[game_id]
            self.metrics.games_watched.set(len(self.games))
            self._changed.set()

    # --- the reader ------------------------------------------------------------------------

    async def _run(self) -> None:
        backoff = _BACKOFF_START
        while True:
            if not self.games:
                self._changed.clear()
                await self._changed.wait()
                continue
            self._changed.clear()
            positions = {game_id: live.version for game_id, live in self.games.items()}
            read = asyncio.ensure_future(self.store.read_many(positions, self.block_ms))
            changed = asyncio.ensure_future(self._changed.wait())
            try:
                await asyncio.wait({read, changed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                if not read.done():
                    # The watched set changed (or this task is being cancelled): drop the read.
                    read.cancel()
                    await asyncio.wait({read}, timeout=_CANCEL_GRACE)
                    if not read.done():  # the cancel was lost (see the module docstring)
                        self._stragglers.add(read)
                        read.add_done_callback(self._straggler_done)
            if read.cancelled() or not read.done():
                continue
            self.metrics.stream_reads.inc()
            try:
                batches = read.result()
            except StoreUnavailable as exc:
                self.metrics.store_unavailable.inc()
                if self.healthy:
                    self.log.warning("reader.store_unavailable", error=str(exc))
                self.healthy = False
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            except Exception as exc:  # a store refusal or a bug: log it, keep the node's reader alive
                self.log.error("reader.read_failed", error=repr(exc), exc_info=True)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            if not self.healthy:
                self.log.info("reader.store_back")
            self.healthy, backoff = True, _BACKOFF_START
            self._publish(batches)

    def _straggler_done(self, read: asyncio.Future[dict[str, list[Any]]]) -> None:
        """A read that lost its cancel has ended: publish what it brought, if anything."""
        self._stragglers.discard(read)
        if read.cancelled() or read.exception() is not None or self._task is None:
            return  # a failure is the next read's to report
        self._publish(read.result())

    def _publish(self, batches: dict[str, list[Any]]) -> None:
        for game_id, envelopes in batches.items():
            live = self.games.get(game_id)
            if live is None:
                continue
            before = live.encodes
            started = time.perf_counter()
            try:
                delivered = live.publish(envelopes, self.service.cached(game_id))
            except Exception as exc:  # ProjectionError, or an engine bug in view/redact
                # A stream this node cannot fold or show: stop watching it rather than loop on it.
                self.log.error(
                    "reader.publish_failed", game_id=game_id, version=live.version, error=repr(exc), exc_info=True
                )
                del self.games[game_id]
                self._changed.set()
                for subscriber in live.subscribers():
                    close = getattr(subscriber, "close_soon", None)
                    if close is not None:
                        close(WSCloseCode.INTERNAL_ERROR, "this game cannot be shown now; reconnect later")
                continue
            self.metrics.publish_seconds.observe(time.perf_counter() - started)
            self.metrics.frames_encoded.inc(live.encodes - before)
            self.metrics.updates_delivered.inc(delivered)
            self.service.offer(live.projection)
            self.service.watch_bots(live.projection)
