"""Who is away: a seat with no socket open for longer than ``DONJON_AWAY_MS`` (2 minutes).

Every node stamps ``seen:<seat>`` (ms since the epoch) in the game's meta for each seat socket
it holds: when the socket says hello, every :func:`refresh_every` while it stays open, and when
it closes. A seat whose stamp is older than the setting is away (a seat that never connected
counts from the game's creation); ``GET /games/{id}`` marks it ``"away": true``. Nothing else
happens to an away seat: a game without a clock waits for it, a game with one runs its clock.
The stamp is not an event: being away changes nothing in the game, so the stream does not
record it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from events.protocol import Store
from projections.game import GameProjection, Status

__all__ = ["SEEN_FIELD", "away_seats", "refresh_every", "stamp_while_open"]

SEEN_FIELD = "seen:"


def refresh_every(away_ms: int) -> float:
    """Seconds between two stamps of an open socket: well inside the away limit."""
    return max(0.05, min(30.0, away_ms / 4000))


def away_seats(meta: Mapping[str, Any] | None, projection: GameProjection, now: int, away_ms: int) -> set[int]:
    """The human seats of an active game not seen for longer than ``away_ms`` at ``now``."""
    if projection.status is not Status.ACTIVE or meta is None:
        return set()
    away = set()
    for seat in range(projection.seats):
        if projection.bots[seat] is not None or seat in projection.left:
            continue
        seen = meta.get(f"{SEEN_FIELD}{seat}")
        last = int(seen) if isinstance(seen, int) else projection.created_ts
        if now - last > away_ms:
            away.add(seat)
    return away


async def stamp_while_open(
    store: Store, game_id: str, seat: int, clock: Callable[[], int], away_ms: int, closed: asyncio.Event
) -> None:
    """Stamp the seat as seen now and every :func:`refresh_every` until ``closed`` is set (the
    socket closed), then once more: away counts from the moment the last socket went.

    An event, not a cancel, ends it: on Python 3.11 redis-py can swallow a cancel that lands in
    a store call (see :mod:`events.tasks`), and the socket's handler waits for this task."""
    while not closed.is_set():
        with contextlib.suppress(Exception):  # a store hiccup only delays the stamp
            await store.update_meta(game_id, {f"{SEEN_FIELD}{seat}": clock()})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(closed.wait(), refresh_every(away_ms))
    with contextlib.suppress(Exception):
        await store.update_meta(game_id, {f"{SEEN_FIELD}{seat}": clock()})
