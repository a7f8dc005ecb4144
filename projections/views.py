"""Per-viewer views and per-viewer event redaction: what leaves the service, for whom.

A *viewer* is a seat (an int from 0) or ``SPECTATOR`` (``None``). Everything sent to a client
goes through the two functions here, so that hidden information is decided in one place:

* :func:`view_for` — the engine's ``view(state, viewer)`` once the game has started (it carries
  ``legal``: the exact commands this viewer may send now); before the start, and for anyone
  but an acting seat, ``legal`` is empty. It is :func:`shared_view` (what every viewer sees
  alike, built once per version however many viewers there are) and :func:`own_view` (the
  rest: at least ``legal``) together.
* :func:`event_for` — one envelope as the viewer may see it: the engine's ``redact`` for engine
  events, a fixed list of public fields for service events; the envelope's ``command`` and hash
  chain never leave, and the seed leaves only inside ``game.finished``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from games.base import Event, SplitViews
from projections.game import (
    CLOCK_EXPIRED,
    CREATED,
    FINISHED,
    MOVE_UNDONE,
    REMATCH,
    SEAT_LEFT,
    SEAT_TAKEN,
    GameProjection,
    Status,
    is_service_event,
)
from projections.lifecycle import UNDO

__all__ = [
    "Viewer", "view_for", "shared_view", "own_view", "event_for", "events_for", "visible_part", "visibility_classes",
]

Viewer = int | None

_PUBLIC_SERVICE_FIELDS: dict[str, tuple[str, ...]] = {
    CREATED: ("game", "options", "seats", "seed_commitment", "draw", "chain", "hidden", "clock", "on_timeout",
              "undo", "spectator_delay", "rematch_of"),
    SEAT_TAKEN: ("seat", "name", "bot", "seed_contribution", "seed_contribution_from"),
    FINISHED: ("seed", "secret_options", "summary"),
    CLOCK_EXPIRED: ("seat",),
    SEAT_LEFT: ("seat", "reason", "bot"),
    MOVE_UNDONE: ("seat", "from", "to"),
    REMATCH: ("id",),
}
"""Service event payload fields any viewer may see; anything else a service event carries stays in."""


def view_for(projection: GameProjection, viewer: Viewer) -> dict[str, Any]:
    """The engine view for ``viewer`` at the projection's version (``{"legal": []}`` before the start)."""
    return {**shared_view(projection), **own_view(projection, viewer)}


def _started(projection: GameProjection) -> bool:
    # Before the engine's setup events (or between the last seat and them, when replaying a
    # version in the middle of that batch) there is no game to show yet.
    return projection.status is not Status.OPEN and bool(projection.engine_events)


def _split(engine: Any) -> SplitViews[Any] | None:
    """The engine, when it splits its views into a public and a private part."""
    return engine if hasattr(engine, "public_view") and hasattr(engine, "private_view") else None


def shared_view(projection: GameProjection) -> dict[str, Any]:
    """The fields of the view that every viewer sees alike: the engine's ``public_view`` and the
    service's lifecycle fields (:func:`with_lifecycle`). Empty before the start, and for an engine
    that does not split its views (its whole view is then each viewer's own)."""
    split = _split(projection.engine)
    if split is None or not _started(projection):
        return {}
    return with_lifecycle(split.public_view(projection.state), projection)


def own_view(projection: GameProjection, viewer: Viewer) -> dict[str, Any]:
    """The rest of ``viewer``'s view (keys apart from :func:`shared_view`'s): the engine's
    ``private_view`` (its whole ``view`` when it does not split), whose ``legal`` is what this
    viewer may send now."""
    if not _started(projection):
        return {"legal": []}
    split = _split(projection.engine)
    if split is None:
        view = with_lifecycle(projection.engine.view(projection.state, viewer), projection)
    else:
        view = split.private_view(projection.state, viewer)
    if projection.status is not Status.ACTIVE or viewer is None:
        # Belt and braces: a finished game or a spectator has nothing to send, whatever the engine says.
        return dict(view, legal=[])
    if viewer in projection.left or projection.bots[viewer] is not None:
        return dict(view, legal=[])  # a bot plays the seat now
    if projection.undo_owed(viewer) is not None:
        return dict(view, legal=[*view.get("legal", []), {"type": UNDO, "args": {}}])
    return view


def with_lifecycle(view: dict[str, Any], projection: GameProjection) -> dict[str, Any]:
    """``view`` with the service's own fields: ``clock`` (games with a clock), ``left`` (seats
    that resigned or timed out) and ``rematch`` (the rematch game's id, once created). Every one
    of them is public: remaining times, who left, a game id."""
    extra: dict[str, Any] = {}
    if projection.clock is not None:
        extra["clock"] = projection.clock.as_view()
    if projection.left:
        extra["left"] = list(projection.left)
    if projection.rematch is not None:
        extra["rematch"] = projection.rematch
    return dict(view, **extra) if extra else view


def visible_part(engine: Any, kind: str, payload: dict[str, Any], viewer: Viewer) -> tuple[str, dict[str, Any]] | None:
    """The type and payload of an event as ``viewer`` may see it (``None``: hidden from it): the
    engine's ``redact`` for engine events, the public fields of a service event. The store's
    sealing keeps a spectator's part in clear (:mod:`service.fairness.sealing`), so the two agree."""
    if is_service_event(kind):
        fields = _PUBLIC_SERVICE_FIELDS.get(kind, ())
        return kind, {key: payload[key] for key in fields if key in payload}
    redacted = engine.redact(Event(kind, payload), viewer)
    if redacted is None:
        return None
    return redacted.type, redacted.payload


def event_for(projection_engine: Any, envelope: Any, viewer: Viewer) -> dict[str, Any] | None:
    """``envelope`` as ``viewer`` may see it, as a frame-ready dict; ``None`` when it is hidden."""
    visible = visible_part(projection_engine, envelope.type, envelope.payload, viewer)
    if visible is None:
        return None
    kind, payload = visible
    return {
        "version": envelope.version,
        "type": kind,
        "payload": payload,
        "actor": envelope.actor,
        "ts": envelope.ts,
    }


def events_for(engine: Any, envelopes: Iterable[Any], viewer: Viewer) -> list[dict[str, Any]]:
    """Every envelope ``viewer`` may see, redacted, in order."""
    out = []
    for envelope in envelopes:
        event = event_for(engine, envelope, viewer)
        if event is not None:
            out.append(event)
    return out


def visibility_classes(projection: GameProjection) -> list[Viewer]:
    """Every distinct viewer of a game: each seat, then the spectators."""
    return [*range(projection.seats), None]
