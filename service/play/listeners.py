"""Who the game cache tells what it did, as typed interfaces given at construction.

The cache appends this node's batches and loads and forgets games; three parts of a node follow
that, and each is told through a :class:`typing.Protocol` it implements, not through hooks
assigned afterwards:

* the :class:`GameListener` of a cache (the :class:`~service.play.game_service.GameService` that
  owns it) is told of every append before it is sent, when it is done (well or not) and once it
  landed, and of every game loaded or forgotten; it answers which games must stay cached. It
  passes each to the one part that acts on it: the lobby and the due-bots index
  (:class:`~service.play.listings.Listings`), the bot scheduler, the clock keeper;
* an :class:`AppendWatcher` (the node's stream reader, :mod:`service.edge.reader`) is told of this
  node's appends in flight, so that it can hold the append notice of such an append until the
  append is done and push the projection the command path folded, rather than fold the same
  events a second time; it keeps the games it has sockets on cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from projections.game import GameProjection
from service.play.decisions import Batch

__all__ = ["Append", "AppendWatcher", "GameListener"]


@dataclass(frozen=True, slots=True)
class Append:
    """One append of this node: the batch, the projection it was decided on and the one it
    leads to (its head hash as the fold has it), and whether it changes the game's lobby entry
    (a seat taken, the start; the end always does)."""

    before: GameProjection
    batch: Batch
    after: GameProjection
    lobby_changed: bool = False

    @property
    def game_id(self) -> str:
        return self.batch.game_id


class AppendWatcher(Protocol):
    """Follows this node's appends in flight (the node's stream reader)."""

    def appending(self, game_id: str, version: int) -> None:
        """An append of this node reaching ``version`` is about to be sent."""

    def append_done(self, game_id: str, version: int) -> None:
        """That append is done, well or not (the projection after it is cached by then, if it
        was appended)."""

    def appended(self, append: Append, after: GameProjection) -> None:
        """That append landed (not a duplicate); ``after`` is the projection after it, cached."""

    def keeps(self, game_id: str) -> bool:
        """True for a game the cache must not forget (one with sockets on this node)."""


class GameListener(Protocol):
    """Follows everything a :class:`~service.play.cache.GameCache` does to its games."""

    async def appending(self, append: Append) -> None:
        """``append`` is about to be sent to the store."""

    def append_done(self, append: Append) -> None:
        """``append`` is done, well or not: appended, refused, or a retry of an applied command."""

    async def appended(self, append: Append, after: GameProjection) -> None:
        """``append`` landed; ``after`` is the projection after it, cached (under the game's lock)."""

    async def loaded(self, projection: GameProjection) -> None:
        """A game this node did not have was loaded from its stream (as after a restart)."""

    def evicted(self, game_id: str) -> None:
        """The cache forgot ``game_id``."""

    def keeps(self, game_id: str) -> bool:
        """True for a game the cache must not forget."""
