"""The node's stream reader: the only path from the event store to this node's sockets.

The node watches every game that has a socket on it. Its :class:`events.feed.GameFeed` is
subscribed to those games' append notices (sharded pub/sub, one connection per master), which
carry the appended events. The reader pushes carried events that continue the version it has
shown; for any other announced game (a gap: a notice lost, a first subscription, a batch too
large to carry) it reads the stream from that version, in one non-blocking ``store.read_many``
(one ``XREAD`` on one server; one ``XRANGE`` per game, pipelined per master, on a cluster). Every
``block_ms`` it also reads the next :data:`POLL_SLICE` watched games in turn, whatever the
notices say: the safety net for a notice lost in a way the feed did not notice. Order and
exactly-once come from the stream versions alone (a publish takes only versions newer than the
pushed one). The number of store connections therefore grows with the masters, not with the
games or slots watched.

Whatever it gets is folded by that game's :class:`~projections.live.LiveGame` and fanned out to
the game's sockets; the newer projection is offered to the command path's cache so the next
command decides on it. Events this node is appending itself are not folded here a second time:
the reader pushes this node's own append as soon as it lands, from the batch and the projection
the command path folded (:meth:`Node.appended`; the store's answer says the stream holds those
entries), when it continues what the game's sockets were shown; a notice of it that comes before
the append's answer is held until that append is done; a notice that comes after finds nothing
newer. It is the game service's :class:`~service.play.listeners.AppendWatcher`, told of this
node's appends in flight and landed.
Because every node, including the one that took a command, pushes this
same way, a command taken on node A reaches spectators on node B exactly as it reaches its own
sender. Each new version is also shown to the command path's bot watch
(``GameService.watch_bots``), so a bot move that the appending node never makes (it died) is
made here once overdue.

When the store is unreachable, the reader backs off and retries; sockets stay open and receive
what they missed, in order, once it is back. :attr:`Node.problem` names what is failing (the
reads, or the feed's subscriptions) while it fails; ``/readyz`` answers 503 then.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from aiohttp import WSCloseCode

from events.envelope import Envelope
from events.errors import StoreUnavailable
from events.protocol import Store
from events.tasks import stop_task
from projections.delay import delayed
from projections.game import GameProjection
from projections.live import AnySubscriber, LiveGame, spectators_frame
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.play.batches import Batch
from service.play.game_service import GameService
from service.play.listeners import Append

__all__ = ["Node"]

_BACKOFF_START = 0.05
_BACKOFF_MAX = 2.0
_RESTART_AFTER = 1.0
"""Seconds before a reader that a bug stopped is started again."""
SPECTATORS_EVERY_S = 0.25
"""A changed spectator count is pushed at most this often per game: a crowd arriving at once
costs one frame per socket, not one per arrival."""
POLL_SLICE = 256
"""Watched games the safety net reads every ``block_ms``, whatever the notices say, in turn; it
bounds the poll's cost on a node watching thousands of games (on a cluster a read costs one
``XRANGE`` per game)."""


class Node:
    """Live games on this node and the reader task that feeds them."""

    def __init__(
        self, store: Store, service: GameService, metrics: Metrics, *, block_ms: int = 1000,
        spectators_batched: bool = False,
    ) -> None:
        self.store = store
        self.service = service
        self.metrics = metrics
        self.block_ms = block_ms
        self.spectators_batched = spectators_batched
        """Whether spectators' frames leave together (:mod:`service.edge.spectator_batch`)."""
        self.games: dict[str, LiveGame] = {}
        self._loading: dict[str, asyncio.Task[LiveGame]] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.feed = store.feed(
            on_notice=metrics.feed_notices.inc, on_reconnect=metrics.feed_reconnects.inc, shown=self._shown_head
        )
        self.log = get_logger()
        self.healthy = True
        """False while the last read of the streams failed."""
        self._read_error: str | None = None
        self._poll_cursor = 0
        self._restart: asyncio.TimerHandle | None = None
        self._awaiting: dict[str, list[Any]] = {}
        """Games shown events that this node's own append in flight wrote: those envelopes, pushed
        once that append is done (:meth:`append_done`), with the projection it folded."""
        self._appending: dict[str, list[int]] = {}
        """Game -> the versions this node's appends in flight reach (one at a time under the game's lock)."""
        self._counting: dict[str, asyncio.TimerHandle] = {}
        """Games whose changed spectator count is due to be pushed."""
        service.listen(self)

    # --- this node's appends (service.play.listeners.AppendWatcher) ------------------------------

    def appending(self, game_id: str, version: int) -> None:
        self._appending.setdefault(game_id, []).append(version)

    def append_done(self, game_id: str, version: int) -> None:
        appending = self._appending.get(game_id, [])
        if version in appending:
            appending.remove(version)
        if not appending:
            self._appending.pop(game_id, None)
        envelopes = self._awaiting.pop(game_id, None)
        if envelopes is not None:
            self._publish({game_id: envelopes})

    def appended(self, append: Append, after: GameProjection) -> None:
        """Push what this node's own append wrote as soon as the store has it, from the batch
        (fsync'd by then), instead of waiting for its append notice: the sender's update then
        leaves with its ack. Only in a game with no spectators here or whose spectators' frames
        are batched, when it continues what the game's sockets were shown and no spectator delay
        holds events back; else the notice (or a read) pushes it, as any other node's append. The
        notice that follows finds nothing newer to push."""
        live = self.games.get(append.game_id)
        if live is None or live.version != append.batch.expected_version or delayed(after):
            return
        if live.spectator_count and not self.spectators_batched:
            # Unless their frames leave together, spectators are served better on the notice:
            # while the node is busy fanning a version out, the next appends' notices pile up
            # and one frame per socket shows them all (measured at 1 game x 200 spectators:
            # 25-50 % more CPU per move when pushed here; with the frames batched, 5-15 % less).
            return
        if self.service.cached(append.game_id) is not after:  # the push takes the fold as it is, never folds again
            return
        self._awaiting.pop(append.game_id, None)
        self._publish({append.game_id: appended_envelopes(append.batch, after)})

    def keeps(self, game_id: str) -> bool:
        """The games with sockets on this node stay in the command path's cache."""
        return game_id in self.games

    @property
    def problem(self) -> str | None:
        """Why this node's reader cannot feed its sockets now (``None`` when it can)."""
        if not self.healthy:
            return f"the stream reader is failing: {self._read_error}"
        if self.games and self.feed.problem is not None:
            return f"the append notices are failing: {self.feed.problem}"
        return None

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="donjon-node-reader")
            self._task.add_done_callback(self._reader_ended)

    def _reader_ended(self, task: asyncio.Task[None]) -> None:
        """The reader never ends but by a cancel; if a bug ends it, say so (``/readyz`` fails
        until a new reader, started a second later, has read again)."""
        if task.cancelled() or task.exception() is None or self._task is not task:
            return
        self.healthy, self._read_error = False, f"the reader stopped: {task.exception()!r}"
        self.log.error("reader.died", error=repr(task.exception()))
        self._task = None
        self._restart = asyncio.get_running_loop().call_later(_RESTART_AFTER, self.start)

    async def stop(self) -> None:
        if self._restart is not None:
            self._restart.cancel()
        for timer in self._counting.values():
            timer.cancel()
        task, self._task = self._task, None
        await stop_task(task)
        for pending in self._loading.values():
            pending.cancel()
        await self.feed.close()

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
        spectators = await self.service.for_spectators(projection)
        held = await self.service.events(game_id, spectators.version + 1) if spectators is not projection else []
        sealer = await self.service.sealer(game_id)
        live = self.games.get(game_id)
        if live is None:
            live = self.games[game_id] = LiveGame(projection, spectators, held, sealer.open_all)
            self._watch_changed()
        return live

    def subscribe(self, live: LiveGame, subscriber: AnySubscriber) -> None:
        """Add a socket to a loaded game (synchronously, so no push slips in between)."""
        if self.games.get(live.game_id) is not live:
            self.games[live.game_id] = live
            self._watch_changed()
        live.add(subscriber)
        if subscriber.viewer is None:
            self._count_soon(live.game_id)

    def unsubscribe(self, game_id: str, subscriber: AnySubscriber) -> None:
        live = self.games.get(game_id)
        if live is None:
            return
        live.discard(subscriber)
        if not len(live):
            del self.games[game_id]
            self._watch_changed()
        elif subscriber.viewer is None:
            self._count_soon(game_id)

    def spectators(self, game_id: str) -> int:
        """The spectator sockets watching ``game_id`` on this node (each node counts its own)."""
        live = self.games.get(game_id)
        return live.spectator_count if live is not None else 0

    def _count_soon(self, game_id: str) -> None:
        if game_id not in self._counting:
            loop = asyncio.get_running_loop()
            self._counting[game_id] = loop.call_later(SPECTATORS_EVERY_S, self._push_count, game_id)

    def _push_count(self, game_id: str) -> None:
        """Tell every socket of the game its spectator count, if it changed since last told."""
        self._counting.pop(game_id, None)
        live = self.games.get(game_id)
        if live is None or live.spectator_count == live.announced_spectators:
            return
        live.announced_spectators = live.spectator_count
        live.announce(spectators_frame(game_id, live.spectator_count))

    # --- the reader ------------------------------------------------------------------------

    def _watch_changed(self) -> None:
        self.metrics.games_watched.set(len(self.games))
        self.feed.watch(self.games)
        self._changed.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        backoff = _BACKOFF_START
        read_all = True
        next_poll = loop.time()
        while True:
            if not self.games:
                self._changed.clear()
                await self._changed.wait()
                read_all = True
                continue
            if read_all:
                positions = {game_id: live.version for game_id, live in self.games.items()}
            else:
                due = await self.feed.next(max(0.0, next_poll - loop.time()))
                positions = {} if due is None else self._push_carried(due)
                if loop.time() >= next_poll:
                    self.metrics.feed_polls.inc()
                    positions.update(self._poll_slice(positions))
                    next_poll = loop.time() + self.block_ms / 1000
            if not positions:
                continue
            self.metrics.stream_reads.inc()
            try:
                batches = await self.store.read_many(positions)
            except Exception as exc:  # StoreUnavailable, a store refusal or a bug: keep the reader alive
                self._read_error = str(exc)
                if isinstance(exc, StoreUnavailable):
                    self.metrics.store_unavailable.inc()
                    if self.healthy:
                        self.log.warning("reader.store_unavailable", error=str(exc))
                else:
                    self.log.error("reader.read_failed", error=repr(exc), exc_info=True)
                self.healthy, read_all = False, True  # what was announced must still be read
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            if not self.healthy:
                self.log.info("reader.store_back")
            self.healthy, read_all, backoff = True, False, _BACKOFF_START
            self._read_error = None
            self._publish(batches)

    def _shown_head(self, game_id: str) -> str | None:
        """The chain hash of the last event pushed of ``game_id`` ("": unknown), for the feed."""
        live = self.games.get(game_id)
        return None if live is None else live.projection.head_hash

    def _poll_slice(self, reading: dict[str, int]) -> dict[str, int]:
        """The safety net's next :data:`POLL_SLICE` watched games (round robin), read whatever the
        notices said: so a lost notice is made up within ``block_ms`` x (games / slice)."""
        order = list(self.games)
        if not order:  # the last socket left while the reader waited
            return {}
        start = self._poll_cursor % len(order)
        self._poll_cursor = start + POLL_SLICE
        chosen = order[start : start + POLL_SLICE] + order[: max(0, start + POLL_SLICE - len(order))]
        return {game_id: self.games[game_id].version for game_id in chosen if game_id not in reading}

    def _push_carried(self, due: dict[str, list[Any]]) -> dict[str, int]:
        """Push the events the notices carried where they continue what was shown; the positions
        of the announced games that must be read instead."""
        carried, positions = {}, {}
        for game_id, envelopes in due.items():
            live = self.games.get(game_id)
            if live is None or (envelopes and envelopes[-1].version <= live.version):
                continue  # not watched, or shown already (this node pushed its own append as it landed)
            if _continues(live.version, envelopes):
                carried[game_id] = envelopes
            else:
                positions[game_id] = live.version
        if carried:
            self._publish(carried)
        self.metrics.feed_gap_reads.inc(len(positions))
        return positions

    def _awaits_own_append(self, game_id: str, live: LiveGame, envelopes: list[Any]) -> bool:
        """Hold ``envelopes`` back when this node is appending exactly them and the cache does
        not have the projection after them yet: the append notice often comes before the
        append's own answer, and folding the events here would fold them a second time on this
        node. Held only until that append is done, well or not (then the push folds if it must)."""
        last = envelopes[-1].version if envelopes else 0
        if last <= live.version or last not in self._appending.get(game_id, ()):
            return False
        cached = self.service.cached(game_id)
        if cached is not None and cached.version >= last:
            return False
        held = self._awaiting.get(game_id, [])
        self._awaiting[game_id] = sorted({e.version: e for e in (*held, *envelopes)}.values(), key=_version)
        return True

    def _publish(self, batches: dict[str, list[Any]]) -> None:
        for game_id, envelopes in batches.items():
            live = self.games.get(game_id)
            if live is None or self._awaits_own_append(game_id, live, envelopes):
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
                self._watch_changed()
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


def appended_envelopes(batch: Batch, after: GameProjection) -> list[Envelope]:
    """The envelopes ``batch`` became in the stream, opened, as far as a viewer may see them
    (the chain's hashes never leave the node, so they are left empty)."""
    first = batch.expected_version + 1
    return [
        Envelope(
            batch.game_id, first + i, event.type, getattr(event, "schema", 1), event.payload, batch.command_id,
            batch.actor, batch.ts, "", "", batch.command if i == 0 else None,
        )
        for i, event in enumerate(batch.events)
    ]


def _version(envelope: Any) -> int:
    return int(envelope.version)


def _continues(version: int, envelopes: list[Any]) -> bool:
    """True when ``envelopes`` are consecutive versions reaching past ``version`` with no gap after it."""
    if not envelopes or envelopes[0].version > version + 1 or envelopes[-1].version <= version:
        return False
    return all(later.version == earlier.version + 1 for earlier, later in itertools.pairwise(envelopes))
