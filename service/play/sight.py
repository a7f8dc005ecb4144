"""What a viewer may see of a game now: the one place every route and the websocket ask.

A seat sees the present; a spectator of a game with ``spectator_delay`` sees it behind the
present (:mod:`projections.delay` decides the version, purely). :meth:`Sight.of` gives the
projection a route shows, and a route reads no event newer than that projection's version: an
event appended while the route runs is then never shown early, whatever the order of its reads
(the bug this module ended: ``GET /games/{id}/events`` read the stream after deciding, and showed
what was appended in between). The node's live pushes keep the spectators' projection of each
watched game in :class:`projections.live.LiveGame`, released by the same rules.

Spectators of a delayed game poll: each answer would fold the game from its first event to the
version they may see. The last such projection of each game is kept (:data:`KEPT` games, least
recently asked first out), and the next answer folds only the events after it; a game's
spectators only ever move forward, so it is never ahead of what they may see.

>>> KEPT
128
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from projections.delay import delayed, visible_version
from projections.game import GameProjection

if TYPE_CHECKING:
    from service.play.cache import GameCache

__all__ = ["KEPT", "Sight"]

KEPT = 128
"""Delayed games whose spectators' projection a node keeps, to fold on from it."""


class Sight:
    """Decides, for the routes of one node, what a viewer may see of a game now."""

    def __init__(self, cache: GameCache, clock: Callable[[], int]) -> None:
        self.cache = cache
        self.clock = clock
        self._behind: OrderedDict[str, GameProjection] = OrderedDict()

    async def of(self, game_id: str, seat: int | None) -> GameProjection:
        """The game as ``seat`` may see it now (``None``: a spectator); every route shows this and
        reads no event past its version."""
        projection = await self.cache.load(game_id)
        return projection if seat is not None else await self.spectators(projection)

    async def spectators(self, projection: GameProjection) -> GameProjection:
        """``projection`` (the present) as spectators may see it now: the same projection when
        the game has no delay or is over, else the one at :func:`visible_version`."""
        if not delayed(projection):
            return projection
        game_id = projection.game_id
        behind = self._behind.get(game_id)
        if behind is not None and behind.version > projection.version:
            behind = None  # a stale present: nothing to fold on from
        shown = behind.version if behind is not None else 0
        timed = "ms" in (projection.features.spectator_delay or {})  # recorded as {"ms": N} (or {"versions": N})
        # A time delay needs the stamps of the events after what spectators were shown already.
        envelopes = await self.cache.events(game_id, shown + 1, projection.version) if timed else []
        target = visible_version(projection, envelopes, self.clock(), known=max(1, shown))
        if target >= projection.version:
            return projection
        if behind is None or target < behind.version:
            seen = await self.cache.projection_at(game_id, target)
        elif target == behind.version:
            seen = behind
        else:
            after = envelopes if timed else await self.cache.events(game_id, shown + 1, target)
            seen = behind.apply_all(envelope for envelope in after if envelope.version <= target)
        self._keep(seen)
        return seen

    def _keep(self, projection: GameProjection) -> None:
        self._behind[projection.game_id] = projection
        self._behind.move_to_end(projection.game_id)
        while len(self._behind) > KEPT:
            self._behind.popitem(last=False)
