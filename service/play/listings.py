"""What the store lists beside a game's stream, kept by one subscriber: the lobby entry
(:mod:`projections.lobby`) and the due-bots index (:mod:`events.due`).

:class:`Listings` is told of each append of this node (by the game service, which the cache tells,
:mod:`service.play.listeners`) and updates both from the appended batch, so the command path
never writes them. The order is what makes a crash safe: a game is listed as due *before* an
append that leaves a bot owing a move, or whose lobby write must follow (a seat, the start, the
end), so that a crash or a failed lobby write lists too much, never too little: the due-bots
sweep (:mod:`service.bots.sweep`) finds the game and repairs its lobby entry. Once the lobby
write succeeds, a game that owes no bot move is unlisted at once. A game loaded by a node that
did not have it gets its lobby entry repaired, should a node have died between an append and
its lobby write.
"""

from __future__ import annotations

from typing import Any

from projections import lobby
from projections.game import GameProjection, Status
from service.bots import owes_bot
from service.ops.logs import get_logger
from service.play.listeners import Append

__all__ = ["Listings"]


class Listings:
    """One node's writer of the lobby and the due-bots index."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.due = store.due_bots
        self.log = get_logger()

    @staticmethod
    def _records_lobby(append: Append) -> bool:
        return append.lobby_changed or append.after.status is Status.FINISHED

    def _lists(self, append: Append) -> bool:
        """True when the append is listed as due before it is sent: a bot will owe a move after
        it, or a lobby write must follow it. A creation is not listed: until its append and
        lobby write succeed, nobody knows the game's id."""
        before, after = append.before, append.after
        return (owes_bot(after) and not owes_bot(before)) or (self._records_lobby(append) and before.version > 0)

    async def appending(self, append: Append) -> None:
        if self._lists(append):
            await self.due.mark(append.game_id, append.batch.ts)

    async def appended(self, append: Append, after: GameProjection) -> None:
        if not self._records_lobby(append):
            return
        await lobby.record(self.store, after)
        if self._lists(append) and not owes_bot(after):
            # Listed only for the lobby write, which is done: unlisted now (unless listed again
            # meanwhile) rather than by a later sweep, which on another node would first fold
            # the whole game to find that it owes nothing.
            await self.due.drop(append.game_id, append.batch.ts)

    async def repair(self, projection: GameProjection) -> bool:
        """Record the lobby entry if a node died between an append and its lobby write; True
        when it had to."""
        repaired = await lobby.repair(self.store, projection)
        if repaired:
            self.log.info("lobby.repaired", game_id=projection.game_id, version=projection.version)
        return repaired
