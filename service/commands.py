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

Bots: ``POST /games`` may fill seats with the bots a game offers (:mod:`service.bots`); those
seats are taken in the creation append (``game.seat_taken`` with ``bot``). Whenever a bot seat
owes a command, the node that appended the last event decides the bot's command (with
``bot_rng(seed, game_id, seat, v)``) and appends it like any command, recorded in the envelope,
with the command id ``bot:<seat>:<v>``: two nodes racing to make the same bot move decide the
same command under the same id on the same expected version, so the store applies it once. A
node that loses such a race steps back. Any other node that sees a bot's move overdue by
``DONJON_BOT_TAKEOVER_MS`` (through its stream reader, or when it loads the game, as after a
restart) makes it; a game moved by someone else in the meantime is left to them. One task per
game and node drives its bots, a move at a time under the game's lock, pausing
``DONJON_BOT_DELAY_MS`` (at least one event-loop turn) between moves.

Idempotency: a command's id is namespaced by seat (``"<seat>:<client id>"``) so seats cannot
collide, and passed to the store, which refuses to apply the same id twice. A resent command
the rules now refuse (it was applied, so it is no longer legal) is looked up before the
refusal is reported (``store.command_result``), so the client gets the earlier ``ack`` either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import re
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from events.errors import ConflictError, GameExists, StoreUnavailable, UnknownGame
from games.base import Engine, Event, RuleError, derive_rng, fold
from projections import lobby
from projections.game import CREATED, FINISHED, SEAT_TAKEN, GameProjection, Status
from service.errors import ErrorCode, ServiceError, from_rule_error
from service import seeds
from service.bots import Bot, bot_command_id, bot_rng, bots_for, due_bot
from service.logs import get_logger
from service.metrics import Metrics

__all__ = ["GameService", "CommandResult", "hash_token", "TAKE_SEAT", "CREATE_GAME", "MAX_NAME", "bot_seat_name"]

TAKE_SEAT = "take_seat"
"""The ``command.type`` recorded on a seat batch, so replay and auditors see where batches begin."""
CREATE_GAME = "create_game"
"""The ``command.type`` recorded on a creation batch that seats bots: ``{"bots": {"1": "greedy"}}``."""
SEAT_KEY = re.compile(r"[0-9]{1,3}")
_BOT_BACKOFF_START = 0.05
_BOT_BACKOFF_MAX = 2.0


def bot_seat_name(bot: str) -> str:
    """The display name of a seat a bot fills."""
    return f"{bot} bot"
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
class _BotTask:
    """A game's bot task on this node: it either drives (makes the owed bot moves now) or
    watches (waits until a move is overdue, then drives unless the game moved meanwhile)."""

    task: asyncio.Task[None]
    driving: bool
    expect: int | None = None
    """While driving: the version the game is at if only this node appended since the
    driver's last look; anything else means another node moved the game."""


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
        bot_delay: float = 0.0,
        bot_takeover: float = 3.0,
    ) -> None:
        self.store = store
        self.engines = dict(engines)
        self.metrics = metrics or Metrics()
        self.retries = retries
        self.clock = clock
        self.bots: dict[str, dict[str, Bot]] = {name: bots_for(engine) for name, engine in self.engines.items()}
        """Game -> the bots it offers, by name."""
        self.bot_delay = bot_delay
        self.bot_takeover = bot_takeover
        self._cache: OrderedDict[str, GameProjection] = OrderedDict()
        self._meta: dict[str, _GameMeta] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._bot_tasks: dict[str, _BotTask] = {}
        """Game -> its bot task on this node."""
        self._bot_failed: dict[str, int] = {}
        """Game -> the version at which its bot failed (logged); not retried at that version."""
        self._closed = False
        self.log = get_logger()

    async def close(self) -> None:
        """Stop every bot task (an append in flight is atomic: it lands whole or not at all)."""
        self._closed = True
        tasks = [entry.task for entry in self._bot_tasks.values()]
        self._bot_tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

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
            self._bot_failed.pop(old, None)

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
            # A game this node did not have: maybe its bots' driver died (a restart).
            self.watch_bots(projection)
        return self._cache.get(game_id, projection)

    async def _repair_lobby(self, projection: GameProjection) -> None:
        """Record the lobby entry if a node died between an append and its lobby write."""
        await lobby.repair(self.store, projection)

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

    async def create_game(
        self, game: Any, options: Any, seats: Any, bots: Any = None, bots_only: Any = False
    ) -> GameProjection:
        """Validate, store the meta with the secret seed, append ``game.created`` (and the bot
        seats, and the setup when bots fill every seat); the new projection.

        ``bots`` maps seats (``"1"`` or ``1``) to bot names the game offers; every seat may be a
        bot only with ``bots_only`` true.
        """
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
        bot_seats = self._bot_seats(game, seats, bots, bots_only)
        seed = seeds.new_seed()
        public, secret = seeds.split_options(engine, normalized)
        ts = self.clock()
        for _ in range(3):
            game_id = secrets.token_hex(8)
            try:
                meta_fields = {"game": game, "seed": seed.hex(), "options": normalized, "seats": seats, "created": ts}
                if bot_seats:
                    meta_fields["bots"] = {str(seat): name for seat, name in bot_seats.items()}
                await self.store.create_game(game_id, meta_fields)
                break
            except GameExists:
                continue
        else:  # pragma: no cover - 2**64 ids
            raise ServiceError(ErrorCode.INTERNAL, "could not pick a free game id")
        created = Event(
            CREATED,
            {"game": game, "options": public, "seats": seats, "seed_commitment": seeds.commitment(seed, secret)},
        )
        events = [created] + [
            Event(SEAT_TAKEN, {"seat": seat, "name": bot_seat_name(name), "bot": name}) for seat, name in bot_seats.items()
        ]
        if len(bot_seats) == seats:
            # Setup decides on top of the last seat's version minus one, as for a human's seat.
            events += engine.setup(normalized, seats, derive_rng(seed, game_id, len(events) - 1))
        command = {"type": CREATE_GAME, "args": {"bots": {str(s): n for s, n in bot_seats.items()}}} if bot_seats else None
        await self.store.append(
            game_id, events, expected_version=0, command_id=None, actor=None, command=command, ts=ts
        )
        self._meta[game_id] = _GameMeta(game=game, seed=seed, options=normalized)
        projection = self._advance(GameProjection.empty(game_id, engine), events, ts, None)
        await lobby.record(self.store, projection)
        self.metrics.games_created.inc(game=game)
        self.metrics.events_appended.inc(len(events))
        self.log.info("game.created", game_id=game_id, game=game, seats=seats, bots=len(bot_seats), version=projection.version)
        self._kick_bots(projection, now=True)
        return projection

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
            if isinstance(key, int) and not isinstance(key, bool):
                seat = key
            elif isinstance(key, str) and SEAT_KEY.fullmatch(key):
                seat = int(key)
            else:
                seat = -1
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
                self._kick_bots(projection, now=True)
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
            try:
                result, ts = await self._append_decision(projection, seat, command, command_id, events)
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
            projection = await self._applied(projection, events, ts, seat)
            self._kick_bots(projection, now=True)
            return CommandResult(result.last_version), meta.game
        raise ServiceError(ErrorCode.CONFLICT, f"game {game_id!r} kept changing under the command; resend it")

    async def _append_decision(
        self,
        projection: GameProjection,
        seat: int,
        command: dict[str, Any],
        command_id: str,
        events: list[Event],
    ) -> tuple[Any, int]:
        """Append what ``decide`` made of ``command`` on top of ``projection``: (result, ts).

        Raises the store's ``ConflictError`` when another writer moved the game first."""
        ts = self.clock()
        result = await self.store.append(
            projection.game_id,
            events,
            expected_version=projection.version,
            command_id=command_id,
            actor=seat,
            command=command,
            ts=ts,
        )
        return result, ts

    async def _applied(self, projection: GameProjection, events: list[Event], ts: int, seat: int) -> GameProjection:
        """The cached projection after this node's own append, and the lobby when it ended the game."""
        projection = self._advance(projection, events, ts, seat)
        self.metrics.events_appended.inc(len(events))
        if projection.status is Status.FINISHED:
            await lobby.record(self.store, projection)
            self.log.info(
                "game.finished", game_id=projection.game_id, version=projection.version, summary=projection.summary
            )
        return projection

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

    # --- bots ----------------------------------------------------------------------------

    def bot_names(self, game: str) -> list[str]:
        """The names of the bots ``game`` offers, sorted (the catalog lists them)."""
        return sorted(self.bots.get(game, {}))

    def watch_bots(self, projection: GameProjection) -> None:
        """A bot of this game may owe a move that another node should make: make it here if it
        is still owed once overdue (the node's reader and a fresh load call this)."""
        self._kick_bots(projection, now=False)

    def _kick_bots(self, projection: GameProjection, *, now: bool) -> None:
        """See that a bot owing a command gets to move: at once (``now``: this node appended
        the last event), else once the move is overdue, unless the game has moved by then.

        Called with the game's lock held (or on a game no one else knows yet), so a driver seen
        here has not yet decided, under the lock, that nothing is owed: it will look again.
        """
        if self._closed or not projection.has_bots or projection.status is not Status.ACTIVE:
            return
        game_id = projection.game_id
        if self._bot_failed.get(game_id) == projection.version:
            return
        entry = self._bot_tasks.get(game_id)
        if entry is not None and not entry.task.done():
            if entry.driving:
                if now:
                    entry.expect = projection.version  # this node's append, not a rival's
                return
            if not now:
                return
            entry.task.cancel()  # a watch; this node drives now
        if due_bot(projection.engine, projection.state, projection.bots) is None:
            return
        task = asyncio.create_task(
            self._drive_bots(game_id, None if now else projection.version), name=f"donjon-bots-{game_id}"
        )
        self._bot_tasks[game_id] = _BotTask(task, driving=now, expect=projection.version if now else None)

    def _forget_bot_task(self, game_id: str, task: asyncio.Task[Any] | None) -> None:
        entry = self._bot_tasks.get(game_id)
        if entry is not None and entry.task is task:
            del self._bot_tasks[game_id]

    def _overdue_in(self, projection: GameProjection | None) -> float:
        """Seconds until a bot move owed since the last event counts as overdue (0: already).

        Each node adds up to half the delay again at random, so nodes that all see the same
        overdue move rarely all reach for it at once."""
        waited = 0.0 if projection is None else max(0.0, (self.clock() - projection.last_ts) / 1000)
        return max(0.0, self.bot_takeover - waited) + random.uniform(0.0, self.bot_takeover / 2)

    async def _drive_bots(self, game_id: str, watched: int | None) -> None:
        """Make the bot moves owed in ``game_id``, one per turn of the loop, until a human owes
        the next command or the game ends.

        With ``watched`` (a version) the task first watches: it waits until the move is overdue
        and leaves the game to others if it moved past ``watched`` meanwhile. A driver that
        finds the game moved by another node (it lost a race for a move, or the game changed
        during its pause) goes back to watching: that node drives now.
        """
        me = asyncio.current_task()
        backoff = _BOT_BACKOFF_START
        pause = False
        try:
            while not self._closed:
                if watched is not None:
                    await asyncio.sleep(self._overdue_in(self._cache.get(game_id)))
                elif pause:
                    await asyncio.sleep(self.bot_delay)  # also yields to the loop between moves
                pause = True
                try:
                    async with self._lock(game_id):
                        entry = self._bot_tasks.get(game_id)
                        if entry is None or entry.task is not me:
                            return  # replaced by a driver of this node's own
                        projection = await self.load(game_id)
                        if watched is not None:
                            if projection.version != watched:
                                self._forget_bot_task(game_id, me)  # whoever moved it drives its bots
                                return
                            self.log.info("bot.takeover", game_id=game_id, version=projection.version)
                            watched = None
                        elif entry.expect is not None and projection.version != entry.expect:
                            watched, entry.driving = projection.version, False  # another node moved it
                            continue
                        entry.driving = True
                        due = due_bot(projection.engine, projection.state, projection.bots)
                        if due is None or projection.status is not Status.ACTIVE:
                            self._forget_bot_task(game_id, me)
                            return
                        after = await self._bot_move(projection, *due)
                        if after is not None:
                            entry.expect = after
                        else:
                            # Another writer appended first, so it drives; watch in case it dies.
                            watched, entry.driving = (await self.load(game_id)).version, False
                except StoreUnavailable as exc:
                    self.metrics.store_unavailable.inc()
                    self.log.warning("bot.store_unavailable", game_id=game_id, error=str(exc))
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, _BOT_BACKOFF_MAX)
                    continue
                backoff = _BOT_BACKOFF_START
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bot or engine bug, or a game gone: log it, leave the game be
            cached = self._cache.get(game_id)
            if cached is not None:
                self._bot_failed[game_id] = cached.version
            self.log.error("bot.failed", game_id=game_id, error=repr(exc))
        finally:
            self._forget_bot_task(game_id, me)

    async def _bot_move(self, projection: GameProjection, seat: int, name: str) -> int | None:
        """Decide and append the move of the bot ``name`` in ``seat``: the version after it, or
        ``None`` when another writer appended first (the same bot move, or anything else)."""
        game_id = projection.game_id
        meta = await self._game_meta(game_id)
        bot = self.bots.get(projection.game, {}).get(name)
        if bot is None:
            raise ServiceError(ErrorCode.INTERNAL, f"seat {seat} of game {game_id!r} is bot {name!r}, which this service lacks")
        command = bot.choose(projection.state, seat, bot_rng(meta.seed, game_id, seat, projection.version))
        events = self._decide(projection, seat, command, meta, None)
        command_id = bot_command_id(seat, projection.version)
        try:
            result, ts = await self._append_decision(projection, seat, command, command_id, events)
        except ConflictError:
            self.metrics.bot_races_lost.inc()
            return None
        if result.duplicate:
            self.metrics.bot_races_lost.inc()
            return None
        projection = await self._applied(projection, events, ts, seat)
        self.metrics.bot_moves.inc(game=projection.game, bot=name)
        self.log.info("bot.moved", game_id=game_id, seat=seat, bot=name, command_id=command_id, version=projection.version)
        return projection.version
