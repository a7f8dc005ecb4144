"""Running a command: decide on the cached state, append, and decide again when another writer
moved the game first.

Data flows one way: command -> decide -> append -> (stream) -> evolve -> view -> push. This
module owns the first half for a seat's commands (the bot scheduler sends bots' commands down
the same :func:`decide` and :meth:`~service.play.cache.GameCache.commit`). It decides on the node's
cached projection and appends with ``expected_version`` set to the version it decided on. Two
things send it back to the stream, each bounded, with the game's lock held all along:

* a **conflict** (another node appended first): catch up from the stream and decide again;
* a **refusal** by the rules while the cache may be behind the stream (another node took
  commands): decide again on the latest state before reporting the refusal.

After ``Settings.command_retries`` attempts it answers ``conflict``. A command sent with
``expected_version`` is never decided again on another version: it gets ``conflict`` at once.
Acks come from here, after the append; updates to sockets never do (see :mod:`service.edge.reader`).

Logging: a refused command gets its own ``info`` line (``command.rejected``: game, command id,
code); an accepted one gets a ``debug`` line (``command.accepted``: game, version, command id,
latency), and at ``info`` one ``commands.accepted`` line a second while commands come
(:class:`AcceptedTally`: how many, resends among them, games, mean and worst latency), so the
default level costs a line a second, not a line per command.

Idempotency: a command's id is namespaced by seat (``"<seat>:<client id>"``) so seats cannot
collide, and passed to the store, which refuses to apply the same id twice. A resent command
the rules now refuse (it was applied, so it is no longer legal) is looked up before the
refusal is reported (``store.command_result``), so the client gets the earlier ``ack`` either way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from events.errors import ConflictError, UnknownGame
from games.base import Command, RuleError
from projections.game import GameProjection, Status
from projections.lifecycle import RESIGN
from service.errors import ErrorCode, ServiceError, from_rule_error
from service.ops.logs import get_logger
from service.ops.metrics import Metrics
from service.play import decisions
from service.play.cache import GameCache, GameMeta

__all__ = ["TALLY_SECONDS", "AcceptedTally", "CommandResult", "CommandRunner", "decide"]

TALLY_SECONDS = 1.0
"""The window of one ``commands.accepted`` line."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What the sender's ``ack`` says: the version after its events, and whether it was a resend."""

    version: int
    duplicate: bool = False


def decide(
    projection: GameProjection,
    seat: int,
    command: Command,
    meta: GameMeta,
    *,
    ts: int,
    command_id: str,
    expected_version: int | None = None,
    takeover: str | None = None,
) -> decisions.Batch:
    """The batch ``command`` from ``seat`` makes on top of ``projection``, or the ServiceError
    that refuses it (``conflict``, ``not_started``, ``game_over``, the rules' own code)."""
    if expected_version is not None and projection.version != expected_version:
        raise ServiceError(
            ErrorCode.CONFLICT,
            f"expected_version {expected_version} but game {projection.game_id!r} is at {projection.version}",
        )
    if projection.status is Status.OPEN:
        raise ServiceError(ErrorCode.NOT_STARTED, f"game {projection.game_id!r} starts when every seat is taken")
    if projection.status is Status.FINISHED:
        raise ServiceError(ErrorCode.GAME_OVER, f"game {projection.game_id!r} is over")
    try:
        return decisions.command_decision(
            projection,
            seat,
            command,
            seed=meta.seed,
            options=meta.full_options(projection),
            ts=ts,
            command_id=command_id,
            takeover=takeover,
        )
    except RuleError as exc:
        raise from_rule_error(exc) from None
    except decisions.EngineFault as exc:
        raise ServiceError(ErrorCode.INTERNAL, str(exc)) from None


def refuse_human(projection: GameProjection, seat: int, command: Command, ts: int) -> None:
    """A human seat's command refused before any decision: the seat left (a bot plays it), or
    its turn clock has run out at ``ts`` (only ``resign`` is still taken)."""
    if not projection.started or projection.status is Status.FINISHED:
        return  # decide() answers not_started / game_over
    if seat in projection.left or projection.bots[seat] is not None:
        raise ServiceError(ErrorCode.NOT_YOUR_TURN, f"seat {seat} left game {projection.game_id!r}; a bot plays it")
    if seat in decisions.expired_seats(projection, ts) and command.get("type") != RESIGN:
        raise ServiceError(ErrorCode.CLOCK_EXPIRED, f"seat {seat}'s time ran out in game {projection.game_id!r}")


@dataclass(slots=True)
class AcceptedTally:
    """The accepted commands of one window, logged as one ``info`` line when it closes."""

    log: Any
    window: float = TALLY_SECONDS
    accepted: int = 0
    duplicates: int = 0
    latency_sum: float = 0.0
    latency_max: float = 0.0
    games: set[str] = field(default_factory=set)

    def add(self, game_id: str, latency: float, duplicate: bool) -> None:
        if not self.accepted:
            asyncio.get_running_loop().call_later(self.window, self.flush)
        self.accepted += 1
        self.duplicates += duplicate
        self.latency_sum += latency
        self.latency_max = max(self.latency_max, latency)
        self.games.add(game_id)

    def flush(self) -> None:
        if not self.accepted:
            return
        self.log.info(
            "commands.accepted",
            accepted=self.accepted,
            duplicates=self.duplicates,
            games=len(self.games),
            latency_ms_mean=round(self.latency_sum / self.accepted * 1000, 3),
            latency_ms_max=round(self.latency_max * 1000, 3),
            seconds=self.window,
        )
        self.accepted = self.duplicates = 0
        self.latency_sum = self.latency_max = 0.0
        self.games = set()


class CommandRunner:
    """Runs the commands of seated players on one node (``GameService.execute``)."""

    def __init__(
        self,
        cache: GameCache,
        metrics: Metrics,
        *,
        retries: int,
        clock: Callable[[], int],
        takeover: Callable[[str], str | None] = lambda game: None,
    ) -> None:
        self.cache = cache
        self.takeover = takeover
        """Game -> the bot that takes a seat that resigns (:func:`service.play.decisions.takeover_bot`)."""
        self.store = cache.store
        self.metrics = metrics
        self.retries = retries
        self.clock = clock
        self.log = get_logger()
        self.tally = AcceptedTally(self.log)

    async def execute(
        self,
        game_id: str,
        seat: int,
        client_id: str,
        command: Command,
        expected_version: int | None = None,
    ) -> CommandResult:
        """Decide and append ``command`` from ``seat``; the version to ack, or a ServiceError."""
        started = time.perf_counter()
        command_id = f"{seat}:{client_id}"
        game = "?"
        try:
            async with self.cache.lock(game_id):
                result, game = await self._execute_locked(game_id, seat, command_id, command, expected_version)
        except ServiceError as exc:
            self.metrics.commands.inc(game=game if game != "?" else self.cache.game_name(game_id), result=exc.code)
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
        self.log.debug(
            "command.accepted",
            game_id=game_id,
            version=result.version,
            command_id=command_id,
            duplicate=result.duplicate,
            latency_ms=round(latency * 1000, 3),
        )
        self.tally.add(game_id, latency, result.duplicate)
        return result

    async def _execute_locked(
        self, game_id: str, seat: int, command_id: str, command: Command, expected_version: int | None
    ) -> tuple[CommandResult, str]:
        meta = await self.cache.meta(game_id)
        projection = await self.cache.current(game_id)
        caught_up = False
        for _attempt in range(self.retries):
            if expected_version is not None and projection.version != expected_version and not caught_up:
                projection, caught_up = await self.cache.load(game_id), True
            try:
                ts = self.clock()
                refuse_human(projection, seat, command, ts)
                batch = decide(
                    projection,
                    seat,
                    command,
                    meta,
                    ts=ts,
                    command_id=command_id,
                    expected_version=expected_version,
                    takeover=self.takeover(meta.game),
                )
            except ServiceError:
                earlier = await self._earlier_result(game_id, command_id)
                if earlier is not None:
                    return earlier, meta.game
                if caught_up:
                    raise
                # The cache may be behind the stream (another node took commands): decide
                # again on the latest state before refusing.
                latest, caught_up = await self.cache.load(game_id), True
                if latest.version == projection.version:
                    raise
                projection = latest
                continue
            try:
                result, _after = await self.cache.commit(projection, batch)
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
                projection, caught_up = await self.cache.load(game_id), True
                continue
            except UnknownGame:
                raise ServiceError(ErrorCode.NOT_FOUND, f"no game {game_id!r}") from None
            return CommandResult(result.last_version, result.duplicate), meta.game
        raise ServiceError(ErrorCode.CONFLICT, f"game {game_id!r} kept changing under the command; resend it")

    async def _earlier_result(self, game_id: str, command_id: str) -> CommandResult | None:
        """The ack of ``command_id`` if the store applied it already (a resend after a lost ack)."""
        earlier = await self.store.command_result(game_id, command_id)
        return None if earlier is None else CommandResult(earlier.last_version, True)

