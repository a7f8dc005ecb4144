"""Live push: one :class:`LiveGame` per game watched on this node, fanning updates out to sockets.

The node's stream reader is the only caller of :meth:`LiveGame.publish`: every event reaches a
socket through the stream, whichever node took the command. ``publish`` opens the new envelopes'
sealed parts and folds them once, then for each *visibility class* that has subscribers (each
seat, the spectators) builds the ``update`` frame once and encodes it once per wire codec, and
hands the same bytes to every socket of that class. A subscriber is anything with ``viewer``,
``codec`` and ``deliver(data)``.

Frames (see docs/protocol.md)::

    snapshot   {"type", "game", "version", "status", "seat", "seats", "view"}
    update     {"type", "game", "version", "status", "seats", "events", "view"}
    spectators {"type", "game", "count"}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from projections.delay import delayed, visible_version
from projections.game import GameProjection
from projections.views import Viewer, events_for, own_view, shared_view, view_for

__all__ = ["Subscriber", "AnySubscriber", "LiveGame", "snapshot_frame", "spectators_frame", "update_frame"]


Data = TypeVar("Data", str, bytes)
"""What a codec encodes a frame to, and so what a subscriber using it is handed."""
Data_co = TypeVar("Data_co", str, bytes, covariant=True)


class _Codec(Protocol[Data_co]):
    @property
    def name(self) -> str: ...

    def encode(self, frame: dict[str, Any]) -> Data_co: ...


class Subscriber(Protocol[Data]):
    """A socket watching one game: it is handed the very data its own ``codec`` encoded.

    Read-only members, so that a subscriber may narrow them (a websocket's codec gives bytes)."""

    @property
    def viewer(self) -> Viewer: ...

    @property
    def codec(self) -> _Codec[Data]: ...

    def deliver(self, data: Data) -> None: ...


AnySubscriber = Subscriber[Any]
"""A subscriber of any codec: a game keeps its subscribers of every codec side by side."""


def snapshot_frame(projection: GameProjection, viewer: Viewer) -> dict[str, Any]:
    """The whole present for ``viewer``: sent in answer to a ``hello`` without ``since``."""
    return {
        "type": "snapshot",
        "game": projection.game_id,
        "version": projection.version,
        "status": projection.status.value,
        "seat": viewer,
        "seats": projection.seat_list(),
        "view": view_for(projection, viewer),
    }


def spectators_frame(game_id: str, count: int) -> dict[str, Any]:
    """How many spectator sockets watch the game on this node: a number, never who."""
    return {"type": "spectators", "game": game_id, "count": count}


def update_frame(projection: GameProjection, envelopes: Sequence[Any], viewer: Viewer) -> dict[str, Any]:
    """What changed for ``viewer``: the events it may see (redacted) and the view after them."""
    return dict(_update_head(projection, envelopes, viewer), view=view_for(projection, viewer))


def _update_head(projection: GameProjection, envelopes: Sequence[Any], viewer: Viewer) -> dict[str, Any]:
    """An update frame but for its ``view``."""
    return {
        "type": "update",
        "game": projection.game_id,
        "version": projection.version,
        "status": projection.status.value,
        "seats": projection.seat_list(),
        "events": events_for(projection.engine, envelopes, viewer),
    }


def _visible(projection: GameProjection, held: Sequence[Any]) -> int:
    if not delayed(projection):
        return projection.version
    return visible_version(projection, held, held[-1].ts if held else projection.last_ts)


def _as_stored(envelopes: list[Any]) -> list[Any]:
    """The opener of a game whose events have no sealed parts."""
    return envelopes


class LiveGame:
    """A game's projection at the last version pushed from this node, and who is watching it.

    Subscribers are kept by visibility class, then by codec name, so that a publish builds each
    class's frame once, encodes it once per codec, and hands it to each socket of the group in
    a loop that does nothing else.
    """

    def __init__(
        self,
        projection: GameProjection,
        spectators: GameProjection | None = None,
        held: Sequence[Any] = (),
        opener: Callable[[list[Any]], list[Any]] | None = None,
    ) -> None:
        self.projection = projection
        self.open = opener or _as_stored
        """Opens the sealed parts of the envelopes :meth:`publish` is given (the game's
        :class:`service.fairness.sealing.Sealer`): once per event on this node, however many watch."""
        self.spectators = spectators or projection
        """What spectators see: the projection itself, or behind it under ``spectator_delay``."""
        self._held: list[Any] = [envelope for envelope in held if envelope.version > self.spectators.version]
        """Envelopes newer than the spectators' projection, not yet shown to them."""
        self._watchers: dict[Viewer, dict[str, set[AnySubscriber]]] = {}
        self.encodes = 0
        """How many frames were encoded (once per class and codec per publish): for tests and bench."""
        self.announced_spectators = 0
        """The spectator count the sockets were last told (:meth:`announce`)."""

    @property
    def game_id(self) -> str:
        return self.projection.game_id

    @property
    def version(self) -> int:
        return self.projection.version

    def __len__(self) -> int:
        return sum(len(group) for by_codec in self._watchers.values() for group in by_codec.values())

    def add(self, subscriber: AnySubscriber) -> None:
        by_codec = self._watchers.setdefault(subscriber.viewer, {})
        by_codec.setdefault(subscriber.codec.name, set()).add(subscriber)

    def discard(self, subscriber: AnySubscriber) -> None:
        by_codec = self._watchers.get(subscriber.viewer)
        group = by_codec.get(subscriber.codec.name) if by_codec is not None else None
        if by_codec is None or group is None:
            return
        group.discard(subscriber)
        if not group:
            del by_codec[subscriber.codec.name]
            if not by_codec:
                del self._watchers[subscriber.viewer]

    @property
    def spectator_count(self) -> int:
        """The spectator sockets (no seat) watching on this node."""
        return sum(len(group) for group in self._watchers.get(None, {}).values())

    def announce(self, frame: dict[str, Any]) -> int:
        """Send one frame to every subscriber, whatever it sees: encoded once per codec."""
        by_codec: dict[str, list[AnySubscriber]] = {}
        for subscriber in self.subscribers():
            by_codec.setdefault(subscriber.codec.name, []).append(subscriber)
        for subscribers in by_codec.values():
            data = subscribers[0].codec.encode(frame)
            for subscriber in subscribers:
                subscriber.deliver(data)
        return sum(len(subscribers) for subscribers in by_codec.values())

    def _release(self, fresh: Sequence[Any]) -> list[Any]:
        """The envelopes spectators may now see (all of them without a delay), folded into
        their projection; the rest stay held."""
        if not self._held and not delayed(self.projection):
            self.spectators = self.projection
            return list(fresh)
        self._held.extend(envelope for envelope in fresh if envelope.version > self.spectators.version)
        target = _visible(self.projection, self._held)
        released = [envelope for envelope in self._held if envelope.version <= target]
        self._held = [envelope for envelope in self._held if envelope.version > target]
        if released:
            self.spectators = self.spectators.apply_all(released)
        if not self._held and self.spectators.version == self.projection.version:
            self.spectators = self.projection
        return released

    def subscribers(self) -> list[AnySubscriber]:
        return [
            subscriber for by_codec in self._watchers.values() for group in by_codec.values() for subscriber in group
        ]

    def publish(self, envelopes: Iterable[Any], folded: GameProjection | None = None) -> int:
        """Fold the envelopes newer than the pushed version and fan them out; returns deliveries.

        ``folded`` is the node's cached projection of the game, if it has one: when it stands
        exactly after these envelopes (this node appended them and folded them as it did), it is
        taken as it is instead of folding the same events once more."""
        fresh = self.open([envelope for envelope in envelopes if envelope.version > self.projection.version])
        if not fresh:
            return 0
        self.projection = self._after(fresh, folded)
        released = self._release(fresh)
        delivered = 0
        shown = _Shown()
        for viewer, by_codec in list(self._watchers.items()):
            if viewer is None:
                if not released:
                    continue
                projection, envelopes = self.spectators, released
            else:
                projection, envelopes = self.projection, fresh
            update = shown.update(projection, envelopes, viewer)
            for group in list(by_codec.values()):
                subscribers = list(group)  # a copy: a subscriber may leave its group as it is delivered to
                data = update.encode(subscribers[0].codec)
                self.encodes += 1
                for subscriber in subscribers:
                    subscriber.deliver(data)
                delivered += len(subscribers)
        return delivered

    def _after(self, fresh: list[Any], folded: GameProjection | None) -> GameProjection:
        first, last = fresh[0].version, fresh[-1].version
        if (
            folded is not None
            and folded.game_id == self.game_id
            and folded.version == last
            and first == self.projection.version + 1
            and last - first + 1 == len(fresh)
        ):
            return folded
        return self.projection.apply_all(fresh)


class _Shown:
    """What one publish shows: the shared view of each projection (the seats' and the
    spectators' differ under a spectator delay), built once for every class, and encoded once
    per codec for every class whose codec can splice it into a frame (``encode_part`` and
    ``encode_with_view``, as :class:`service.edge.wire.Codec`)."""

    def __init__(self) -> None:
        self.shared: dict[int, dict[str, Any]] = {}
        self.encoded: dict[tuple[int, str], Any] = {}

    def update(self, projection: GameProjection, envelopes: Sequence[Any], viewer: Viewer) -> _Update:
        shared = self.shared.get(id(projection))
        if shared is None:
            shared = self.shared[id(projection)] = shared_view(projection)
        head = _update_head(projection, envelopes, viewer)
        return _Update(self, projection, head, shared, own_view(projection, viewer))

    def shared_part(self, projection: GameProjection, codec: Any, shared: dict[str, Any]) -> Any:
        key = (id(projection), codec.name)
        part = self.encoded.get(key)
        if part is None:
            part = self.encoded[key] = codec.encode_part(shared)
        return part


class _Update:
    """One class's update frame, encoded for each codec its sockets use."""

    def __init__(
        self, shown: _Shown, projection: GameProjection, head: dict[str, Any], shared: dict[str, Any],
        own: dict[str, Any],
    ) -> None:
        self.shown, self.projection, self.head, self.shared, self.own = shown, projection, head, shared, own
        self.spliced = bool(shared) and shared.keys().isdisjoint(own)
        """The shared part goes in as encoded once (an engine that split its view, keys apart)."""

    def encode(self, codec: _Codec[Any]) -> Any:
        encode_with_view = getattr(codec, "encode_with_view", None)
        if self.spliced and encode_with_view is not None:
            return encode_with_view(self.head, self.shown.shared_part(self.projection, codec, self.shared), self.own)
        return codec.encode(dict(self.head, view={**self.shared, **self.own}))
