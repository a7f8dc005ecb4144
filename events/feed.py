"""Which watched games have new events: sharded pub/sub notices, to read the streams at once.

The append script ends with ``SPUBLISH game:{ID}:live <the entries it appended>`` (the channel
hashes to the game's slot, so the script stays in one slot). A :class:`GameFeed` subscribes
(``SSUBSCRIBE``) to the channel of every game its node watches and hands the node, per game
announced, the events the notices carried (the store's ``decode_notice``, given at construction). The
node pushes carried events that continue what it has shown, and reads the stream from there
otherwise. A notice that ends at what the node has shown is dropped as it arrives, and any
other is decoded only when the node asks for its games (:meth:`GameFeed.next`): a node's own
append often comes back as a notice before the append's answer, and by the time the node asks,
it has usually shown that append itself, so that notice too is dropped undecoded. Order and
exactly-once come from the stream versions, so a notice lost, doubled or late costs only a read.
What closes every gap:

* **A subscription confirmed is a notice.** An append that lands before the ``SSUBSCRIBE`` is
  found by the read that the confirmation triggers; one after it is announced.
* **The slow poll.** When no notice comes for ``poll`` seconds, :meth:`GameFeed.next` answers
  "every watched game" (``None``), so a node catches up even with the feed down.
* **A reshard.** When a slot moves, the old master ends its channels' subscriptions
  (``sunsubscribe``) or refuses a new one (``MOVED``): the feed refreshes the cluster's slot
  map, subscribes on the new owner, and the confirmation triggers a read.

Connections: one per master that serves a watched game (on one server, one), however many
games are watched; each is a plain connection in subscriber mode, made from the store's own
connection settings, with a ``PING`` every few seconds so a dead peer is noticed.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import redis.exceptions as rexc
from redis.asyncio.cluster import RedisCluster

from events.envelope import Envelope
from events.keys import game_of_channel, live_channel
from events.server import Server
from events.tasks import stop_task

__all__ = ["GameFeed"]

_PING_EVERY = 5.0
"""Seconds between keep-alive PINGs on a subscriber connection; no reply within two of them
means the connection is dead."""
_BACKOFF_START, _BACKOFF_MAX = 0.05, 2.0


class _Link:
    """One subscriber connection to one server, and the replies it still owes, in order."""

    def __init__(self, name: str, connection: Any) -> None:
        self.name = name
        self.connection = connection
        self.games: set[str] = set()
        """Games subscribed (or asked for) on this link."""
        self.pending: deque[tuple[str, str]] = deque()
        """``(command, game)`` sent and not yet answered: ``sub``, ``unsub``, ``ping``."""
        self.last_reply = time.monotonic()
        self.reader: asyncio.Task[None] | None = None
        self.broken = False

    async def send(self, command: str, game_id: str) -> None:
        verb = {"sub": "SSUBSCRIBE", "unsub": "SUNSUBSCRIBE"}[command]
        self.pending.append((command, game_id))
        await self.connection.send_command(verb, live_channel(game_id))

    async def ping(self) -> None:
        self.pending.append(("ping", ""))
        await self.connection.send_command("PING")

    async def close(self) -> None:
        self.broken = True
        if self.reader is not None and self.reader is not asyncio.current_task():
            await stop_task(self.reader)
        with contextlib.suppress(Exception):
            await self.connection.disconnect()


class GameFeed:
    """Notices of new events for a changing set of games (see the module docstring).

    ``watch(ids)`` sets the games (synchronously; subscriptions follow in the background);
    ``await next(poll)`` returns the games announced since the last call, each with the events
    its notices carried (possibly none: read it), or ``None`` when nothing was announced for
    ``poll`` seconds (read every game then). ``problem`` names the
    feed's current trouble (``None`` when every watched game is subscribed).

    ``server`` is the store's (its connection settings make the subscriber connections);
    ``decode(game_id, payload, shown_head)`` turns a notice into the events it carries (the
    store's ``decode_notice``), or ``None`` when it ends at ``shown_head``. ``on_notice`` is
    called for every append notice received (the node counts them in its metrics),
    ``on_reconnect`` when a subscriber connection is lost (its games are subscribed again on a
    new one); both are given here, once, or not at all. ``shown(game_id)`` is the chain hash of
    the last event the watcher has shown of a game ("" or ``None``: unknown), asked when
    :meth:`next` hands the game over: a notice that ends there is not decoded, and a game whose
    newest announcement is such a notice is not handed over at all. ``ends_at(payload, head)``
    (the store's ``notice_ends_at``) tells, decoding no event, whether a notice ends at a chain
    hash: one that ends at what the watcher shows as it arrives is dropped then, unannounced.
    """

    def __init__(
        self,
        server: Server,
        decode: Callable[[str, bytes, str | None], list[Envelope] | None],
        *,
        on_notice: Callable[[], None] | None = None,
        on_reconnect: Callable[[], None] | None = None,
        shown: Callable[[str], str | None] | None = None,
        ends_at: Callable[[bytes, str], bool] | None = None,
    ) -> None:
        self.server = server
        self._decode = decode
        self._ends_at = ends_at
        self._on_notice = on_notice
        self._on_reconnect = on_reconnect
        self._shown = shown
        self._cluster: RedisCluster | None = server.redis if server.cluster else None
        self._wanted: set[str] = set()
        self._where: dict[str, _Link] = {}
        self._links: dict[str, _Link] = {}
        self._due: set[str] = set()
        self._carried: dict[str, list[bytes | None]] = {}
        """A due game's notices since it was last handed over, undecoded, in order; ``None``
        marks an announcement without events (a subscription confirmed, a connection lost)."""
        self._wake = asyncio.Event()
        self._dirty = asyncio.Event()
        self._refresh = False
        self._task: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self.problem: str | None = None
        self.notices = 0
        """Notices received (announcements and subscription confirmations), for tests and metrics."""
        self.moved = 0
        """Subscriptions ended or refused because their slot moved (and made again elsewhere)."""

    @property
    def connections(self) -> int:
        """Subscriber connections open now."""
        return len(self._links)

    def subscribed_on(self, game_id: str) -> str | None:
        """The server (``host:port`` on a cluster, ``"server"`` on one) holding the game's
        subscription, or ``None`` while it has none."""
        link = self._where.get(game_id)
        return None if link is None else link.name

    # --- the node's side ------------------------------------------------------------------

    def watch(self, game_ids: Iterable[str]) -> None:
        """Follow exactly these games from now on; a game new to the set is due at once."""
        wanted = set(game_ids)
        added = wanted - self._wanted
        if wanted != self._wanted:
            self._wanted = wanted
            self._dirty.set()
        if added:
            self._announce(added)
        if self._task is None and wanted:
            self._task = asyncio.create_task(self._keep_subscribed(), name="donjon-feed")

    async def next(self, poll: float) -> dict[str, list[Envelope]] | None:
        """The watched games announced since the last call (waiting up to ``poll`` seconds for
        one), each with the events their notices carried, in order; ``None`` when none came."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + poll
        while True:
            due = self._due & self._wanted
            carried, self._carried = self._carried, {}
            self._due.clear()
            handed = {}
            for game_id in due:
                envelopes = self._unshown(game_id, carried.get(game_id, ()))
                if envelopes is not None:
                    handed[game_id] = envelopes
            if handed:
                return handed
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), remaining)

    async def close(self) -> None:
        task, self._task = self._task, None
        await stop_task(task)
        for link in list(self._links.values()):
            await link.close()
        self._links.clear()
        self._where.clear()

    def _arrived(self, game_id: str, payload: bytes) -> None:
        """A notice of a watched game: dropped at once when it ends at what the watcher shows (it
        is the newest on a live subscription, and a chain hash names one history: nothing is left
        to read for the game, whatever announced it before); else kept, undecoded, for :meth:`next`."""
        shown = self._shown(game_id) if self._shown else None
        if shown and self._ends_at is not None and self._ends_at(payload, shown):
            self._due.discard(game_id)
            self._carried.pop(game_id, None)
            return
        self._carried.setdefault(game_id, []).append(payload)
        self._due.add(game_id)
        self._wake.set()

    def _unshown(self, game_id: str, notices: Iterable[bytes | None]) -> list[Envelope] | None:
        """The events of ``notices`` past what the watcher has shown, ``[]`` when the game must
        be read, or ``None`` when its newest announcement is a notice that ends at what the
        watcher shows: a chain hash names one history, so nothing is left to read for it,
        whatever announced it before."""
        shown = self._shown(game_id) if self._shown else None
        envelopes: list[Envelope] | None = []
        for payload in notices:
            if payload is None:  # announced without events: read, unless a later notice settles it
                envelopes = envelopes or []
                continue
            decoded = self._decode(game_id, payload, shown)
            envelopes = None if decoded is None else [*(envelopes or ()), *decoded]
        return envelopes

    def _announce(self, game_ids: Iterable[str]) -> None:
        """Games due to be read (a subscription, a lost connection, a slot moved, newly watched)."""
        for game_id in game_ids:
            self._due.add(game_id)
            notices = self._carried.get(game_id)
            if notices is not None:
                notices.append(None)
        self._wake.set()

    # --- keeping the subscriptions --------------------------------------------------------

    async def _keep_subscribed(self) -> None:
        backoff = _BACKOFF_START
        while True:
            try:
                await asyncio.wait_for(self._dirty.wait(), _PING_EVERY)
            except TimeoutError:
                await self._ping_links()
                continue
            self._dirty.clear()
            try:
                await self._reconcile()
            except Exception as exc:  # the store's trouble or a slot map in motion: try again
                self.problem = f"{type(exc).__name__}: {exc}"
                self._refresh = True
                self._dirty.set()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            backoff = _BACKOFF_START
            if not self._dirty.is_set():
                self.problem = None

    async def _reconcile(self) -> None:
        if self._cluster is not None and (self._refresh or not self._cluster.nodes_manager.slots_cache):
            await self._cluster.nodes_manager.initialize()
        self._refresh = False
        for game_id, link in list(self._where.items()):
            if game_id not in self._wanted or link.broken or link.name != self._owner_name(game_id):
                del self._where[game_id]
                link.games.discard(game_id)
                if not link.broken:
                    await link.send("unsub", game_id)
        for game_id in sorted(self._wanted - self._where.keys()):
            link = await self._link_for(game_id)
            self._where[game_id] = link
            link.games.add(game_id)
            await link.send("sub", game_id)
        for name, link in list(self._links.items()):
            if not link.games and not link.pending:
                del self._links[name]
                await link.close()

    def _owner(self, game_id: str) -> Any:
        """The cluster node serving the game's slot (``SlotNotCoveredError`` when none does)."""
        assert self._cluster is not None
        node = self._cluster.get_node_from_key(live_channel(game_id))
        if node is None:
            raise rexc.SlotNotCoveredError(f"no master serves game {game_id!r}'s slot")
        return node

    def _owner_name(self, game_id: str) -> str:
        return "server" if self._cluster is None else str(self._owner(game_id).name)

    async def _link_for(self, game_id: str) -> _Link:
        name = self._owner_name(game_id)
        link = self._links.get(name)
        if link is not None and not link.broken:
            return link
        if self._cluster is None:
            pool = self.server.redis.connection_pool
            connection_class, kwargs = pool.connection_class, dict(pool.connection_kwargs)
        else:
            node = self._owner(game_id)
            connection_class, kwargs = node.connection_class, dict(node.connection_kwargs)
        kwargs.update(socket_timeout=None, protocol=2)
        connection = connection_class(**kwargs)
        await connection.connect()
        link = self._links[name] = _Link(name, connection)
        link.reader = asyncio.create_task(self._read(link), name=f"donjon-feed-{name}")
        return link

    async def _ping_links(self) -> None:
        for link in list(self._links.values()):
            if time.monotonic() - link.last_reply > 2 * _PING_EVERY + 1:
                self._lose(link, "no reply to PING")
                continue
            try:
                await link.ping()
            except Exception as exc:
                self._lose(link, f"{type(exc).__name__}: {exc}")

    def _lose(self, link: _Link, why: str) -> None:
        """A link is dead: its games get new subscriptions (and a read) elsewhere or later."""
        if link.broken:
            return
        link.broken = True
        self.problem = f"subscriber connection to {link.name} lost: {why}"
        if self._on_reconnect is not None:
            self._on_reconnect()
        self._links.pop(link.name, None)
        for game_id in link.games:
            if self._where.get(game_id) is link:
                del self._where[game_id]
        self._announce(link.games & self._wanted)
        link.games.clear()
        self._refresh = True
        self._dirty.set()
        closing = asyncio.get_running_loop().create_task(link.close())
        self._closing.add(closing)  # held, so that the task is not collected before it ends
        closing.add_done_callback(self._closing.discard)

    async def _read(self, link: _Link) -> None:
        try:
            while True:
                try:
                    reply = await link.connection.read_response(timeout=math.inf)
                except rexc.ResponseError as exc:  # the answer to the oldest command sent
                    link.last_reply = time.monotonic()
                    self._refused(link, exc)
                    continue
                link.last_reply = time.monotonic()
                self._handle(link, reply)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the connection is gone
            self._lose(link, f"{type(exc).__name__}: {exc}")

    def _refused(self, link: _Link, exc: rexc.ResponseError) -> None:
        command, game_id = link.pending.popleft() if link.pending else ("", "")
        self.problem = f"{type(exc).__name__}: {exc}"
        if command == "sub":
            # MOVED: the slot has another owner now. Subscribe there; read in the meantime.
            self._slot_moved(link, game_id)

    def _slot_moved(self, link: _Link, game_id: str) -> None:
        """``game_id``'s slot left ``link``'s master: find its new owner, read it meanwhile
        (nothing when the game is no longer watched on ``link``)."""
        if self._where.get(game_id) is not link:
            return
        self.moved += 1
        del self._where[game_id]
        link.games.discard(game_id)
        self._refresh = True
        self._dirty.set()
        self._announce({game_id} & self._wanted)

    def _handle(self, link: _Link, reply: Any) -> None:
        kind = reply[0].decode() if isinstance(reply, list) and isinstance(reply[0], bytes) else str(reply)
        if kind == "smessage":
            self.notices += 1
            if self._on_notice is not None:
                self._on_notice()
            game_id = game_of_channel(reply[1])
            if game_id in self._wanted:
                self._arrived(game_id, reply[2])
            return
        if kind in ("pong", "PONG") and link.pending and link.pending[0][0] == "ping":
            link.pending.popleft()
            return
        if kind == "ssubscribe":
            game_id = game_of_channel(reply[1])
            if link.pending and link.pending[0] == ("sub", game_id):
                link.pending.popleft()
            self.notices += 1
            self._announce({game_id} & self._wanted)
            return
        if kind == "sunsubscribe":
            game_id = game_of_channel(reply[1])
            if link.pending and link.pending[0] == ("unsub", game_id):
                link.pending.popleft()
                return
            # The server ended it: the slot moved to another master.
            self._slot_moved(link, game_id)
