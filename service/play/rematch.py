"""Rematch: ``POST /games/{id}/rematch`` by a seat of a finished game.

The rematch is a new game of the same game, with the same (full) options, features and bots,
and the seats rotated by one: the old seat ``s`` sits at ``(s - 1) mod n``, so the old seat 1
starts. Exactly one rematch exists per game: its id is picked first and linked to the finished
game by ``game.rematch`` (appended with the finished game's version as the expected version, so
two seats asking at once get the same rematch); then the new game is created under that id
(``game.created`` records ``rematch_of``). A node that dies between the two leaves a link to a
game not yet created; the next request creates it. Each human seat takes its new seat with its
old token (``POST /games/{new}/seats`` with ``Authorization: Bearer <old token>``), which issues a
new token; a rematch's human seats are reserved to them.
"""

from __future__ import annotations

import secrets
from typing import Any

from events.errors import ConflictError, GameExists
from projections.game import GameProjection, Status
from service.errors import ErrorCode, ServiceError
from service.ops.logs import get_logger
from service.play import decisions
from service.play.auth import authenticate
from service.play.cache import GameCache
from service.play.seating import Seating, new_seat_of

__all__ = ["Rematches", "rematch_bots"]


def rematch_bots(finished: GameProjection) -> dict[int, str]:
    """The rematch's bot seats: the finished game's own bots (not bots that took a seat that
    left), at their rotated seats."""
    return {
        new_seat_of(seat, finished.seats): bot
        for seat, bot in enumerate(finished.bots)
        if bot is not None and seat not in finished.left
    }


class Rematches:
    """Creates rematches on one node."""

    def __init__(self, cache: GameCache, seating: Seating, clock: Any) -> None:
        self.cache = cache
        self.seating = seating
        self.clock = clock
        self.log = get_logger()

    async def rematch(self, game_id: str, token: str | None) -> tuple[str, int]:
        """The rematch of ``game_id`` (created if needed) and the caller's seat in it."""
        if token is None:
            raise ServiceError(ErrorCode.UNAUTHORIZED, "a rematch is asked for by a seat: send its token")
        seat = await authenticate(self.cache, game_id, token)
        assert seat is not None
        async with self.cache.lock(game_id):
            finished = await self.cache.load(game_id)
            if finished.status is not Status.FINISHED:
                raise ServiceError(ErrorCode.NOT_OVER, f"game {game_id!r} is not over; a rematch follows its end")
            rematch_id = finished.rematch or await self._link(finished)
            await self._create(finished, rematch_id)
        return rematch_id, new_seat_of(seat, finished.seats)

    async def _link(self, finished: GameProjection) -> str:
        rematch_id = secrets.token_hex(8)
        command = decisions.rematch_command(rematch_id)
        batch = decisions.Batch(
            finished.game_id, decisions.rematch_batch(command), finished.version, self.clock(), command=command
        )
        try:
            await self.cache.commit(finished, batch)
        except ConflictError:
            linked = (await self.cache.load(finished.game_id)).rematch
            if linked is None:
                raise ServiceError(ErrorCode.CONFLICT, "the game kept changing; try again") from None
            return linked
        return rematch_id

    async def _create(self, finished: GameProjection, rematch_id: str) -> None:
        if await self.cache.store.get_meta(rematch_id) is not None:
            return
        meta = await self.cache.meta(finished.game_id)
        bots = rematch_bots(finished)
        try:
            await self.seating.create_game(
                finished.game,
                meta.full_options(finished),
                finished.seats,
                {str(seat): bot for seat, bot in bots.items()},
                len(bots) == finished.seats,
                finished.features,
                rematch_of=finished.game_id,
                game_id=rematch_id,
            )
        except GameExists:
            return  # another node created it meanwhile
        self.log.info("rematch.created", game_id=finished.game_id, rematch=rematch_id)
