"""The command path: create a game, take a seat, run a command; and the node's game cache.

Data flows one way: command -> decide -> append -> (stream) -> evolve -> view -> push. This
module owns the first half. It keeps a per-node cache of each game's projection (immutable, so
the stream reader can offer a newer one and both stay correct), decides on the cached state,
and appends with ``expected_version`` set to the version it decided on; a conflict means
another writer moved the game, so it catches up from the stream and decides again (bounded by
``Settings.command_retries``). Acks come from here, after the append; updates to sockets never
do (see :mod:`service.node`).

Randomness: each game has a secret 32-byte seed in its meta, with the full options (secret
options included: see :mod:`service.seeds`). ``game.created`` carries the public options and
the commitment to the seed and the secret options; the engine gets ``derive_rng(seed, game_id, v)`` for the decision taken on
top of version ``v`` (setup included, on top of the last ``game.seat_taken``'s version minus
one); ``game.finished`` reveals the seed and the secret options in the same append as the events that end the game.

Idempotency: a command's id is namespaced by seat (``"<seat>:<client id>"``) so seats cannot
collide, and passed to the store, which refuses to apply the same id twice. A resent command
the rules now refuse (it was applied, so it is no longer legal) is looked up before the
refusal is reported (``store.command_result``), so the client gets the earlier ``ack`` either way.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from events.errors import ConflictError, GameExists, UnknownGame
from games.base import Engine, Event, RuleError, derive_rng, fold
from projections import lobby
from projections.game import CREATED, FINISHED, SEAT_TAKEN, GameProjection, Status
from service.errors import ErrorCode, ServiceError, from_rule_error
from service import seeds
from service.logs import get_logger
from service.metrics import Metrics

__all__ = ["GameService", "CommandResult", "hash_token", "TAKE_SEAT", "MAX_NAME"]

TAKE_SEAT = "take_seat"
"""The ``command.type`` recorded on a seat batch, so replay and auditors see where batches begin."""
MAX_NAME = 40
TOKEN_FIELD = "token:"
"""Meta field prefix: ``token:<sha256 hex of the token>`` -> seat number."""
CACHE_SIZE = 10_000
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a game id may look like (the service makes 16 hex digits); anything else is not found."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What the sender's ``ack`` says: the version after its events, and whether it was a resend."""

    version: int
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class _Appended:
    """An event this node just appended, shaped like an envelope for the projection."""

    version: int
    type: str
    payload: dict[str, Any]
    ts: int
    actor: int | None = None


@dataclass(slots=True)
class _GameMeta:
    """The immutable parts of a game's meta, plus the token hashes seen so far."""

    game: str
    seed: bytes
    options: dict[str, Any] | None = None
    """The full normalized options, secret ones included (``None`` in metas that predate them)."""
    tokens: dict[str, int] = field(default_factory=dict)

    def full_options(self, projection: GameProjection) -> dict[str, Any]:
        return self.options if self.options is not None else dict(projection.options)


class GameService:
    """Creates games, seats players, runs commands; one per app (per node)."""

    def __init__(
        self,
        store: Any,
        engines: Mapping[str, Engine],
        *,
        metrics: Metrics | None = None,
        retries: int = 5,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.store = store
        self.engines = dict(engines)
        self.metrics = metrics or Metrics()
        self.retries = retries
        self.clock = clock
        self._cache: OrderedDict[str, GameProjection] = OrderedDict()
        self._meta: dict[str, _GameMeta] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.log = get_logger()

    # --- the cache ------------------------------------------------------------------------

    def cached(self, game_id: str) -> GameProjection | None:
        return self._cache.get(game_id)

    def offer(self, projection: GameProjection) -> None:
        """Keep ``projection`` if it is newer than the cached one (the stream reader calls this)."""
        current = self._cache.get(projection.game_id)
        if current is None or projection.version > current.version:
            self._remember(projection)

    def _remember(self, projection: GameProjection) -> None:
        self._cache[projection.game_id] = projection
        self._cache.move_to_end(projection.game_id)
        while len(self._cache) > CACHE_SIZE:
            old, _ = self._cache.popitem(last=False)
            self._meta.pop(old, None)
            self._locks.pop(old, None)

    async def _game_meta(self, game_id: str, *, refresh: bool = False) -> _GameMeta:
        if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
            raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        meta = self._meta.get(game_id)
        if meta is not None and not refresh:
            return meta
        raw = await self.store.get_meta(game_id)
        if raw is None or "game" not in raw or "seed" not in raw:
            raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        tokens = {
            key[len(TOKEN_FIELD):]: int(value) for key, value in raw.items() if key.startswith(TOKEN_FIELD)
        }
        options = raw.get("options")
        meta = _GameMeta(
            game=raw["game"],
            seed=bytes.fromhex(raw["seed"]),
            options=dict(options) if isinstance(options, dict) else None,
            tokens=tokens,
        )
        self._meta[game_id] = meta
        return meta

    def engine_for(self, game: str, game_id: str = "") -> Engine:
        engine = self.engines.get(game)
        if engine is None:
            raise ServiceError(ErrorCode.NOT_FOUND, f"game {game_id!r} is a {game!r}, which this service does not serve")
        return engine

    async def load(self, game_id: str) -> GameProjection:
        """The game folded to the stream's latest version (cache, then catch up from the stream)."""
        projection = self._cache.get(game_id)
        fresh = projection is None
        if projection is None:
            meta = await self._game_meta(game_id)
            projection = GameProjection.empty(game_id, self.engine_for(meta.game, game_id))
        envelopes = await self.store.read(game_id, projection.version + 1)
        projection = projection.apply_all(envelopes)
        if projection.version == 0:
            raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        self.offer(projection)
        if fresh:
            await self._repair_lobby(projection)
        return self._cache.get(game_id, projection)

    async def _repair_lobby(self, projection: GameProjection) -> None:
        """Record the lobby entry if a node died between an append and its lobby write."""
        if lobby.needs_record(await self.store.get_meta(projection.game_id), projection):
            await lobby.record(self.store, projection)

    async def projection_at(self, game_id: str, version: int) -> GameProjection:
        """The game as it was at ``version`` (replay): folded from the start, not cached."""
        meta = await self._game_meta(game_id)
        engine = self.engine_for(meta.game, game_id)
        envelopes = await self.store.read(game_id, 1, version)
        projection = GameProjection.fold(game_id, engine, envelopes)
        if projection.version == 0:
            raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        return projection

    def _lock(self, game_id: str) -> asyncio.Lock:
        lock = self._locks.get(game_id)
        if lock is None:
            lock = self._locks[game_id] = asyncio.Lock()
        return lock

    # --- creating and seating ----------------------------------------------------------------

    async def create_game(self, game: Any, options: Any, seats: Any) -> GameProjection:
        """Validate, store the meta with the secret seed, append ``game.created``; the new projection."""
        if not isinstance(game, str) or game not in self.engines:
            raise ServiceError(
                ErrorCode.UNKNOWN_GAME, f"unknown game {game!r}; GET /games/catalog lists {sorted(self.engines)}"
            )
        engine = self.engines[game]
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
        seed = seeds.new_seed()
        public, secret = seeds.split_options(engine, normalized)
        ts = self.clock()
        for _ in range(3):
            game_id = secrets.token_hex(8)
            try:
                await self.store.create_game(
                    game_id,
                    {"game": game, "seed": seed.hex(), "options": normalized, "seats": seats, "created": ts},
                )
                break
            except GameExists:
                continue
        else:  # pragma: no cover - 2**64 ids
            raise ServiceError(ErrorCode.INTERNAL, "could not pick a free game id")
        created = Event(
            CREATED,
            {"game": game, "options": public, "seats": seats, "seed_commitment": seeds.commitment(seed, secret)},
        )
        await self.store.append(game_id, [created], expected_version=0, command_id=None, actor=None, ts=ts)
        self._meta[game_id] = _GameMeta(game=game, seed=seed, options=normalized)
        projection = GameProjection.empty(game_id, engine).apply(_Appended(1, created.type, created.payload, ts))
        self.offer(projection)
        await lobby.record(self.store, projection)
        self.metrics.games_created.inc(game=game)
        self.metrics.events_appended.inc()
        self.log.info("game.created", game_id=game_id, game=game, seats=seats, version=1)
        return projection

    async def take_seat(self, game_id: str, name: Any) -> tuple[int, str, GameProjection]:
        """Seat a player in the lowest free seat; start the game when it was the last one.

        Returns ``(seat, token, projection)``. The token is returned once and stored only as
        its sha256, bound to this game and seat.
        """
        if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_NAME:
            raise ServiceError(ErrorCode.BAD_REQUEST, f"'name' must be a string of 1-{MAX_NAME} characters, got {name!r}")
        name = name.strip()
        meta = await self._game_meta(game_id)
        token = secrets.token_urlsafe(32)
        digest = hash_token(token)
        async with self._lock(game_id):
            for _attempt in range(self.retries):
                projection = await self.load(game_id)
                if projection.status is not Status.OPEN or not projection.free_seats:
                    raise ServiceError(ErrorCode.GAME_FULL, f"every seat of game {game_id!r} is taken")
                seat = projection.free_seats[0]
                # The hash goes in first: a seat is never taken without its token being valid.
                # A token whose append then loses is never handed out, so its entry binds nothing.
                await self.store.update_meta(game_id, {TOKEN_FIELD + digest: seat})
                events = [Event(SEAT_TAKEN, {"seat": seat, "name": name})]
                if len(projection.free_seats) == 1:
                    engine = projection.engine
                    rng = derive_rng(meta.seed, game_id, projection.version)
                    events += engine.setup(meta.full_options(projection), projection.seats, rng)
                ts = self.clock()
                try:
                    await self.store.append(
                        game_id,
                        events,
                        expected_version=projection.version,
                        command_id=None,
                        actor=seat,
                        command={"type": TAKE_SEAT, "args": {"name": name}},
                        ts=ts,
                    )
                except ConflictError:
                    self.metrics.command_conflicts.inc()
                    continue
                meta.tokens[digest] = seat
                projection = self._advance(projection, events, ts, seat)
                await lobby.record(self.store, projection)
                self.metrics.events_appended.inc(len(events))
                self.log.info("seat.taken", game_id=game_id, seat=seat, version=projection.version)
                return seat, token, projection
        raise ServiceError(ErrorCode.CONFLICT, f"game {game_id!r} kept changing; try again")

    def _advance(self, projection: GameProjection, events: list[Event], ts: int, actor: int | None) -> GameProjection:
        appended = [
            _Appended(projection.version + i + 1, event.type, event.payload, ts, actor) for i, event in enumerate(events)
        ]
        projection = projection.apply_all(appended)
        self.offer(projection)
        return projection

    # --- who is asking ---------------------------------------------------------------------

    async def authenticate(self, game_id: str, token: str | None) -> int | None:
        """The seat ``token`` holds in ``game_id``; ``None`` for no token (a spectator).

        Raises ``unauthorized`` for a token that is not one of this game's (another game's token
        included), and ``not_found`` for an unknown game.
        """
        if token is None:
            await self._game_meta(game_id)
            return None
        digest = hash_token(token)
        meta = await self._game_meta(game_id)
        seat = meta.tokens.get(digest)
        if seat is None:
            meta = await self._game_meta(game_id, refresh=True)
            seat = meta.tokens.get(digest)
        if seat is None:
            raise ServiceError(ErrorCode.UNAUTHORIZED, f"that token holds no seat in game {game_id!r}")
        projection = self._cache.get(game_id) or await self.load(game_id)
        if projection.names[seat] is None:
            projection = await self.load(game_id)
        if projection.names[seat] is None:
            raise ServiceError(ErrorCode.UNAUTHORIZED, f"that token holds no seat in game {game_id!r}")
        return seat

    # --- commands ------------------------------------------------------------------------

    async def execute(
        self,
        game_id: str,
        seat: int,
        client_id: str,
        command: dict[str, Any],
        expected_version: int | None = None,
    ) -> CommandResult:
        """Decide and append ``command`` from ``seat``; the version to ack, or a ServiceError."""
        started = time.perf_counter()
        command_id = f"{seat}:{client_id}"
        game = "?"
        try:
            async with self._lock(game_id):
                result, game = await self._execute_locked(game_id, seat, command_id, command, expected_version)
        except ServiceError as exc:
            self.metrics.commands.inc(game=game if game != "?" else self._game_name(game_id), result=exc.code)
            self.log.info(
                "command.rejected",
                game_id=game_id,
                command_id=command_id,
                code=exc.code,
                latency_ms=round((time.perf_counter() - started) * 1000, 3),
            )
            raise
        latency = time.perf_counter() - started
        self.metrics.commands.inc(game=game, result="ok")
        self.metrics.command_seconds.observe(latency, game=game)
        self.log.info(
            "command.accepted",
            game_id=game_id,
            version=result.version,
            command_id=command_id,
            duplicate=result.duplicate,
            latency_ms=round(latency * 1000, 3),
        )
        return result

    def _game_name(self, game_id: str) -> str:
        meta = self._meta.get(game_id)
        return meta.game if meta else "?"

    async def _execute_locked(
        self, game_id: str, seat: int, command_id: str, command: dict[str, Any], expected_version: int | None
    ) -> tuple[CommandResult, str]:
        meta = await self._game_meta(game_id)
        projection = self._cache.get(game_id) or await self.load(game_id)
        caught_up = False
        for _attempt in range(self.retries):
            if expected_version is not None and projection.version != expected_version and not caught_up:
                projection, caught_up = await self.load(game_id), True
            try:
                events = self._decide(projection, seat, command, meta, expected_version)
            except ServiceError:
                earlier = await self._earlier_result(game_id, command_id)
                if earlier is not None:
                    return earlier, meta.game
                if caught_up:
                    raise
                # The cache may be behind the stream (another node took commands): decide
                # again on the latest state before refusing.
                latest, caught_up = await self.load(game_id), True
                if latest.version == projection.version:
                    raise
                projection = latest
                continue
            ts = self.clock()
            try:
                result = await self.store.append(
                    game_id,
                    events,
                    expected_version=projection.version,
                    command_id=command_id,
                    actor=seat,
                    command=command,
                    ts=ts,
                )
            except ConflictError:
                self.metrics.command_conflicts.inc()
                if expected_version is not None:
                    earlier = await self._earlier_result(game_id, command_id)
                    if earlier is not None:
                        return earlier, meta.game
                    raise ServiceError(
                        ErrorCode.CONFLICT,
                        f"game {game_id!r} moved past expected_version {expected_version}; resync and resend",
                    ) from None
                projection, caught_up = await self.load(game_id), True
                continue
            except UnknownGame:
                raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}") from None
            if result.duplicate:
                return CommandResult(result.last_version, True), meta.game
            projection = self._advance(projection, events, ts, seat)
            self.metrics.events_appended.inc(len(events))
            if projection.status is Status.FINISHED:
                await lobby.record(self.store, projection)
                self.log.info("game.finished", game_id=game_id, version=projection.version, summary=projection.summary)
            return CommandResult(result.last_version), meta.game
        raise ServiceError(ErrorCode.CONFLICT, f"game {game_id!r} kept changing under the command; resend it")

    def _decide(
        self,
        projection: GameProjection,
        seat: int,
        command: dict[str, Any],
        meta: _GameMeta,
        expected_version: int | None,
    ) -> list[Event]:
        if expected_version is not None and projection.version != expected_version:
            raise ServiceError(
                ErrorCode.CONFLICT,
                f"expected_version {expected_version} but game {projection.game_id!r} is at {projection.version}",
            )
        if projection.status is Status.OPEN:
            raise ServiceError(ErrorCode.NOT_STARTED, f"game {projection.game_id!r} starts when every seat is taken")
        if projection.status is Status.FINISHED:
            raise ServiceError(ErrorCode.GAME_OVER, f"game {projection.game_id!r} is over")
        engine = projection.engine
        rng = derive_rng(meta.seed, projection.game_id, projection.version)
        try:
            events = list(engine.decide(projection.state, seat, command, rng))
        except RuleError as exc:
            raise from_rule_error(exc) from None
        if not events:
            raise ServiceError(ErrorCode.INTERNAL, f"{projection.game} decided no events for {command!r}")
        for event in events:
            if "." in event.type:
                raise ServiceError(ErrorCode.INTERNAL, f"{projection.game} produced a service event type {event.type!r}")
        after = fold(engine, events, projection.state)
        if engine.is_terminal(after):
            events.append(
                Event(
                    FINISHED,
                    seeds.finished_payload(
                        meta.seed, seeds.split_options(engine, meta.full_options(projection))[1], engine.summary(after)
                    ),
                )
            )
        return events

    async def _earlier_result(self, game_id: str, command_id: str) -> CommandResult | None:
        """The ack of ``command_id`` if the store applied it already (a resend after a lost ack)."""
        earlier = await self.store.command_result(game_id, command_id)
        return None if earlier is None else CommandResult(earlier.last_version, True)
