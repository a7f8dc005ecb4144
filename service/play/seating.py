"""Creating games and seating players: ``POST /games`` and ``POST /games/{id}/seats``.

A new game gets a secret seed and its options in its meta (the seed, the secret options and the
seat key sealed with the node key, :mod:`service.fairness.seed_vault`), then its
creation batch (:func:`service.play.decisions.creation_batch`): ``game.created``, the bot seats the
request asks for, and the setup when bots fill every seat. A seat is the lowest free one; its
token's hash goes into the meta before the seat batch is appended, so a seat is never taken
without its token being valid. The last seat's batch carries the setup and starts the game.

A seat request may carry a client-chosen ``request_id``, its idempotency key: the token is then
derived from it (:func:`service.play.auth.request_token`) and the seat batch is appended under the
command id :func:`service.play.auth.seat_command_id`, so the store answers a retry whose first try
landed (its reply lost, its node killed) with that first try's versions, and the retry returns
the same seat and the same token. A different request id takes another seat.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from events.errors import ConflictError, GameExists
from events.store import AppendResult
from games.base import Bot, RuleError
from projections.game import LEGACY_DRAW, GameProjection, Status
from projections.lifecycle import Features
from service.errors import ErrorCode, ServiceError, from_rule_error
from service.fairness import seeds
from service.fairness.ledger import record_game
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.play import decisions
from service.play.auth import (
    REQUEST_ID,
    TOKEN_FIELD,
    authenticate,
    hash_token,
    request_token,
    seat_command_id,
)
from service.play.cache import GameCache, GameMeta
from service.play.features import parse_features

__all__ = ["MAX_NAME", "Seating", "new_seat_of"]

MAX_NAME = 40
SEAT_KEY = re.compile(r"[0-9]{1,3}")
_ID_ATTEMPTS = 3


class Seating:
    """Creates games and seats players on one node."""

    def __init__(
        self,
        cache: GameCache,
        bots: Mapping[str, Mapping[str, Bot]],
        metrics: Metrics,
        *,
        retries: int,
        clock: Callable[[], int],
    ) -> None:
        self.cache = cache
        self.store = cache.store
        self.bots = bots
        self.metrics = metrics
        self.retries = retries
        self.clock = clock
        self.log = get_logger()

    async def create_game(
        self,
        game: Any,
        options: Any,
        seats: Any,
        bots: Any = None,
        bots_only: Any = False,
        features: Mapping[str, Any] | Features | None = None,
        rematch_of: str | None = None,
        game_id: str | None = None,
    ) -> GameProjection:
        """Validate, store the meta with the secret seed, append the creation batch; the new
        projection.

        ``bots`` maps seats (``"1"`` or ``1``) to bot names the game offers; every seat may be a
        bot only with ``bots_only`` true. ``features`` are ``POST /games``'s fields
        (:func:`service.play.features.parse_features` checks them), or a rematch's, as recorded.
        """
        engines = self.cache.engines
        if not isinstance(game, str) or game not in engines:
            raise ServiceError(
                ErrorCode.UNKNOWN_GAME, f"unknown game {game!r}; GET /games/catalog lists {sorted(engines)}"
            )
        engine = engines[game]
        if seats is None:
            seats = engine.min_seats
        if not isinstance(seats, int) or isinstance(seats, bool) or not engine.min_seats <= seats <= engine.max_seats:
            raise ServiceError(
                ErrorCode.BAD_OPTIONS,
                f"{game} takes {engine.min_seats}-{engine.max_seats} seats, not {seats!r}",
            )
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise ServiceError(ErrorCode.BAD_OPTIONS, f"options must be an object, not {options!r}")
        try:
            normalized = engine.normalize_options(options, seats)
        except RuleError as exc:
            raise from_rule_error(exc) from None
        bot_seats = self._bot_seats(game, seats, bots, bots_only)
        chosen = features if isinstance(features, Features) else parse_features(
            features or {}, cooperative=engine.cooperative(normalized)
        )
        seed, ts, key = seeds.new_seed(), self.clock(), secrets.token_bytes(32)
        secret = seeds.split_options(engine, normalized)
        new_id = game_id is None
        game_id = await self._new_game(game, seed, key, secret, seats, bot_seats, ts, game_id, rematch_of)
        await record_game(self.store, game_id, game, secret[0], seeds.commitment(seed, secret[1]), ts, new_id=new_id)
        created = decisions.game_created(game, engine, normalized, seats, seed, chosen, rematch_of)
        events = decisions.creation_batch(engine, created, bot_seats, seed=seed, game_id=game_id, options=normalized)
        batch = decisions.Batch(game_id, events, 0, ts, command=decisions.creation_command(bot_seats))
        self.cache.remember_meta(game_id, GameMeta(game=game, seed=seed, options=normalized, seat_key=key))
        _, projection = await self.cache.commit(GameProjection.empty(game_id, engine), batch, lobby_changed=True)
        assert projection is not None  # a creation batch has no command id to be a duplicate of
        self.metrics.games_created.inc(game=game)
        self.log.info(
            "game.created", game_id=game_id, game=game, seats=seats, bots=len(bot_seats), version=projection.version
        )
        return projection

    async def _new_game(
        self,
        game: str,
        seed: bytes,
        key: bytes,
        options: tuple[dict[str, Any], dict[str, Any]],
        seats: int,
        bots: Mapping[int, str],
        ts: int,
        game_id: str | None = None,
        rematch_of: str | None = None,
    ) -> str:
        """Store the meta of a new game under ``game_id`` (a rematch's, picked beforehand:
        ``GameExists`` when taken) or a fresh random id; that id. ``options`` are the public and
        the secret ones: the public in clear, the secret ones, the seed and the seat key sealed
        (:meth:`GameCache.secret_fields`)."""
        public, secret = options
        fields: dict[str, Any] = {
            "game": game,
            "options": public,
            "seats": seats,
            "created": ts,
        }
        if bots:
            fields["bots"] = {str(seat): name for seat, name in bots.items()}
        if rematch_of is not None:
            fields["rematch_of"] = rematch_of
        if game_id is not None:
            await self.store.create_game(game_id, {**fields, **self.cache.secret_fields(game_id, seed, secret, key)})
            return game_id
        for _ in range(_ID_ATTEMPTS):
            game_id = secrets.token_hex(8)
            sealed = self.cache.secret_fields(game_id, seed, secret, key)
            try:
                await self.store.create_game(game_id, {**fields, **sealed})
            except GameExists:
                continue
            return game_id
        raise ServiceError(ErrorCode.INTERNAL, "could not pick a free game id")  # pragma: no cover - 2**64 ids

    def _bot_seats(self, game: str, seats: int, bots: Any, bots_only: Any) -> dict[int, str]:
        """``POST /games``'s ``bots``, checked: seat -> bot name, in seat order."""
        if not isinstance(bots_only, bool):
            raise ServiceError(ErrorCode.BAD_OPTIONS, f"'bots_only' must be true or false, got {bots_only!r}")
        if bots is None:
            return {}
        if not isinstance(bots, dict):
            raise ServiceError(ErrorCode.BAD_OPTIONS, f"'bots' must be an object of seat -> bot name, got {bots!r}")
        offered = self.bots.get(game, {})
        chosen: dict[int, str] = {}
        for key, name in bots.items():
            seat = _seat_number(key)
            if not 0 <= seat < seats:
                raise ServiceError(
                    ErrorCode.BAD_OPTIONS, f"'bots': {key!r} is not a seat of this {seats}-seat game (0 to {seats - 1})"
                )
            if not isinstance(name, str) or name not in offered:
                choices = f"its bots: {', '.join(sorted(offered))}" if offered else "it offers none"
                raise ServiceError(ErrorCode.BAD_OPTIONS, f"'bots': {game} has no bot {name!r} ({choices})")
            if seat in chosen:
                raise ServiceError(ErrorCode.BAD_OPTIONS, f"'bots': seat {seat} is given twice")
            chosen[seat] = name
        if len(chosen) == seats and not bots_only:
            raise ServiceError(
                ErrorCode.BAD_OPTIONS,
                "'bots' fills every seat: a game keeps at least one seat for a human unless 'bots_only' is true",
            )
        return dict(sorted(chosen.items()))

    async def take_seat(
        self,
        game_id: str,
        name: Any,
        request_id: Any = None,
        client_seed: Any = None,
        rematch_token: str | None = None,
    ) -> tuple[int, str, GameProjection]:
        """Seat a player in the lowest free seat; start the game when it was the last one. In
        a rematch the seat is the one reserved to the holder of ``rematch_token`` (a seat token
        of the game it follows), and ``name`` defaults to that seat's old name.

        Returns ``(seat, token, projection)``. The token is stored only as its sha256, bound to
        this game and seat. Without a ``request_id`` it is random and returned once; with one,
        a retry of the request returns the seat and token of its first try that landed.
        ``client_seed`` is the seat's contribution to the game's seed (``docs/fairness.md``);
        without one the service makes it.
        """
        reserved: int | None = None
        before = await self.cache.current(game_id)  # what it is a rematch of never changes
        if before.rematch_of is not None:
            reserved, old_name = await self._reserved_seat(before, rematch_token)
            name = old_name if name is None else name
        elif rematch_token is not None:
            raise ServiceError(ErrorCode.BAD_REQUEST, f"game {game_id!r} is not a rematch: take a seat without a token")
        name = _checked_name(name)
        request_id = _checked_request_id(request_id)
        client_seed = _checked_client_seed(client_seed)
        meta = await self.cache.meta(game_id)
        token, command_id = _token_of(meta, game_id, request_id)
        digest = hash_token(token)
        async with self.cache.lock(game_id):
            for attempt in range(self.retries):
                if command_id is not None:
                    earlier = await self.store.command_result(game_id, command_id)
                    if earlier is not None:
                        return await self._earlier_seat(game_id, name, token, earlier)
                # First on the cached game, as a command is decided: a stale one is refused by
                # the append's expected version and read again, as is one that shows no free seat.
                before = await (self.cache.current(game_id) if attempt == 0 else self.cache.load(game_id))
                seat, before = await self._seat_in(before, attempt > 0, reserved, client_seed)
                # The hash goes in first: a seat is never taken without its token being valid.
                # A token whose append then loses is never handed out, so its entry binds nothing.
                await self.store.update_meta(game_id, {TOKEN_FIELD + digest: seat})
                events = decisions.seat_batch(
                    before, seat, name, seed=meta.seed, options=meta.full_options(before), client_seed=client_seed
                )
                command = decisions.seat_command(name, client_seed)
                batch = decisions.Batch(game_id, events, before.version, self.clock(), seat, command, command_id)
                try:
                    result, projection = await self.cache.commit(before, batch, lobby_changed=True)
                except ConflictError:
                    self.metrics.command_conflicts.inc()
                    continue
                if projection is None:  # the request's first try landed while this one decided
                    return await self._earlier_seat(game_id, name, token, result)
                meta.tokens[digest] = seat
                self.log.info("seat.taken", game_id=game_id, seat=seat, version=projection.version)
                return seat, token, projection
        raise ServiceError(ErrorCode.CONFLICT, f"game {game_id!r} kept changing; try again")

    async def _seat_in(
        self, before: GameProjection, caught_up: bool, reserved: int | None, client_seed: str | None
    ) -> tuple[int, GameProjection]:
        """The seat to take and the game it is taken in: ``before``, or the game read again
        from the stream when ``before`` (not ``caught_up``) shows no seat to take."""
        try:
            return _seat_to_take(before, reserved, client_seed), before
        except ServiceError:
            if caught_up:
                raise
        latest = await self.cache.load(before.game_id)
        return _seat_to_take(latest, reserved, client_seed), latest

    async def _reserved_seat(self, rematch: GameProjection, token: str | None) -> tuple[int, str | None]:
        """The seat of a rematch reserved to the holder of ``token`` (a seat token of the game
        it follows) and that seat's old name."""
        old_id = rematch.rematch_of
        assert old_id is not None
        if token is None:
            raise ServiceError(
                ErrorCode.UNAUTHORIZED,
                f"game {rematch.game_id!r} is a rematch of {old_id!r}: take your seat with your token of that game",
            )
        old_seat = await authenticate(self.cache, old_id, token)
        assert old_seat is not None
        old = await self.cache.load(old_id)
        return new_seat_of(old_seat, rematch.seats), old.names[old_seat]


    async def _earlier_seat(
        self, game_id: str, name: str, token: str, earlier: AppendResult
    ) -> tuple[int, str, GameProjection]:
        """The seat a retried request's first try took, with the request's token bound to it
        again (a later try may have pointed it at the seat it meant to take)."""
        taken = await self.store.read(game_id, earlier.first_version, earlier.first_version)
        seat = int(taken[0].payload["seat"])
        projection = await self.cache.load(game_id)
        if projection.names[seat] != name:
            raise ServiceError(
                ErrorCode.BAD_REQUEST,
                f"that request_id took seat {seat} of game {game_id!r} under another name; use a new request_id",
            )
        digest = hash_token(token)
        await self.store.update_meta(game_id, {TOKEN_FIELD + digest: seat})
        (await self.cache.meta(game_id)).tokens[digest] = seat
        self.log.info("seat.retried", game_id=game_id, seat=seat, version=earlier.first_version)
        return seat, token, projection


def _checked_client_seed(client_seed: Any) -> str | None:
    """``POST /games/{id}/seats``'s ``client_seed``, checked (``None`` when not sent)."""
    if client_seed is not None and (not isinstance(client_seed, str) or not seeds.CLIENT_SEED.fullmatch(client_seed)):
        raise ServiceError(
            ErrorCode.BAD_REQUEST,
            f"'client_seed' must be 1-128 printable ASCII characters without spaces, got {client_seed!r}",
        )
    return client_seed


def _checked_name(name: Any) -> str:
    # The limit is on the name as sent (the contract's maxLength), the blank test on what is kept.
    if not isinstance(name, str) or len(name) > MAX_NAME or not name.strip():
        raise ServiceError(
            ErrorCode.BAD_REQUEST, f"'name' must be a string of 1-{MAX_NAME} characters, got {name!r}"
        )
    return name.strip()


def _checked_request_id(request_id: Any) -> str | None:
    if request_id is None:
        return None
    if not isinstance(request_id, str) or not REQUEST_ID.fullmatch(request_id):
        raise ServiceError(
            ErrorCode.BAD_REQUEST,
            "'request_id' must be 16-128 characters of A-Z a-z 0-9 _ - (a random one, such as a UUID)",
        )
    return request_id



def new_seat_of(old_seat: int, seats: int) -> int:
    """Where the old ``old_seat`` sits in a rematch: the seats rotate by one, so the old seat 1 starts."""
    return (old_seat - 1) % seats


def _seat_number(key: Any) -> int:
    """A seat of ``bots`` as the request names it (``1`` or ``"1"``); -1 for anything else."""
    if isinstance(key, int) and not isinstance(key, bool):
        return key
    if isinstance(key, str) and SEAT_KEY.fullmatch(key):
        return int(key)
    return -1


def _token_of(meta: GameMeta, game_id: str, request_id: str | None) -> tuple[str, str | None]:
    """The seat's token and the seat batch's command id: a random token and none, or both
    derived from the request's ``request_id`` (so a retry yields them again)."""
    if request_id is None:
        return secrets.token_urlsafe(32), None
    return request_token(meta.seat_key, game_id, request_id), seat_command_id(request_id)


def _seat_to_take(before: GameProjection, reserved: int | None, client_seed: str | None) -> int:
    """The seat a request takes in ``before``: the lowest free one, or the one reserved to it."""
    game_id = before.game_id
    if before.status is not Status.OPEN or not before.free_seats:
        raise ServiceError(ErrorCode.GAME_FULL, f"every seat of game {game_id!r} is taken")
    if reserved is not None and reserved not in before.free_seats:
        raise ServiceError(ErrorCode.GAME_FULL, f"seat {reserved} of game {game_id!r} is taken")
    if client_seed is not None and before.draw == LEGACY_DRAW:
        raise ServiceError(
            ErrorCode.BAD_REQUEST, f"game {game_id!r} was created before seats could send a 'client_seed'"
        )
    return before.free_seats[0] if reserved is None else reserved
