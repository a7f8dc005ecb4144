"""Spectator delay: which version of a game a spectator may see (seats always see the present).

With ``spectator_delay`` ``{"versions": N}`` a spectator sees the game ``N`` versions behind;
with ``{"seconds": N}`` (recorded as ``{"ms": N * 1000}``) at the last version whose event is
at least that much older than ``now`` (live pushes take the newest event's ``ts`` as ``now``,
which only ever delays more). A finished game hides nothing more: spectators see its end.
Version 1 (``game.created``) is always visible. Pure: time is passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from projections.game import GameProjection, Status

__all__ = ["delayed", "visible_version"]


def delayed(projection: GameProjection) -> bool:
    """Spectators of this game see it behind the present."""
    return projection.features.spectator_delay is not None and projection.status is not Status.FINISHED


def visible_version(projection: GameProjection, envelopes: Sequence[Any], now: int, *, known: int = 1) -> int:
    """The newest version a spectator may see; ``envelopes`` are the game's (any suffix that
    covers the versions after the answer), each with ``version`` and ``ts``. ``known`` is a
    version spectators may see already (they were shown it at an earlier ``now``): under a time
    delay the answer is never below it, so ``envelopes`` need only start after it."""
    delay = projection.features.spectator_delay
    if delay is None or projection.status is Status.FINISHED:
        return projection.version
    if "versions" in delay:
        return max(1, projection.version - int(delay["versions"]))
    cutoff = now - int(delay["ms"])
    seen: list[int] = [int(envelope.version) for envelope in envelopes if envelope.ts <= cutoff]
    return max([1, known, *seen])
