"""The game projection: fold a game's envelopes into what the service needs to know about it.

Service events (their type has a dot) are handled here; every other event is the engine's and
goes to ``engine.evolve``. The result is an immutable :class:`GameProjection`: the version it
stands at, the status (open, active, finished), the seats and their names, the options, the
seed commitment (and the seed, once ``game.finished`` reveals it) and the engine state.

Service events and their payloads::

    game.created   {"game", "options", "seats", "seed_commitment",      always version 1; "draw"
                    "draw"?, "chain"?, "hidden"?}                       and "chain" name the draw
                                                                        and hash algorithms (absent
                                                                        in older games: the legacy
                                                                        draws and SHA-1); "hidden"
                                                                        the sealing at rest (absent:
                                                                        none, service.sealing)
    game.seat_taken {"seat", "name", "bot"?, "seed_contribution"?,      one per seat; "bot" names
                     "seed_contribution_from"?}                         the bot filling it; the
                                                                        contribution to the game's
                                                                        seed ("seat" or "server"
                                                                        made it), docs/fairness.md
    game.finished  {"seed", "summary", "secret_options"?}               the game's end
    clock.expired  {"seat"}                                             a seat's time ran out
    seat.left      {"seat", "reason", "bot"}                            resigned or timed out;
                                                                        "bot" (or null) takes it
    move.undone    {"seat", "from", "to"}                               versions from..to reverted
    game.rematch   {"id"}                                               after game.finished only

``game.created`` also records the service features (:class:`projections.lifecycle.Features`),
which drive the turn clocks and the undo checkpoints folded here.

The fold takes envelopes whose sealed parts (``docs/store.md``) are open: one that still
carries its ``sealed`` part is refused (:class:`ProjectionError`), since its stored payload is
only what a spectator may see.

Folding: :meth:`GameProjection.apply_all` folds a run of consecutive engine events in one step
(``_fold_run``): the fields they change (state, version, engine events, time, undo checkpoints,
turn clocks, head hash) are local variables while each event is folded exactly as it would be
alone, and one projection is built at the run's end. Service events are folded one at a time;
they are the only events that change seats, bots, the status or the features, so those stay
fixed inside a run. ``apply`` of one envelope is a run of one.

>>> from tests.tinygame import TINY
>>> p = GameProjection.empty("g1", TINY)
>>> p.status, p.version
(<Status.OPEN: 'open'>, 0)
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Protocol

from games.base import Engine, Event
from games.records import Record, copyable
from projections.checkpoints import RunCheckpoints
from projections.lifecycle import TURN, Checkpoint, Clock, Features, clock_started, clock_to

__all__ = [
    "CREATED",
    "SEAT_TAKEN",
    "FINISHED",
    "CLOCK_EXPIRED",
    "SEAT_LEFT",
    "MOVE_UNDONE",
    "REMATCH",
    "Status",
    "GameProjection",
    "ProjectionError",
    "EnvelopeLike",
    "is_service_event",
]

CREATED = "game.created"
LEGACY_DRAW = "python-random"
"""The draw scheme of a game whose ``game.created`` names none (``service.fairness.draw_schemes``)."""
LEGACY_CHAIN = "sha1"
"""The chain of a game whose ``game.created`` names none (``events.chain``)."""
SEAT_TAKEN = "game.seat_taken"
FINISHED = "game.finished"
CLOCK_EXPIRED = "clock.expired"
SEAT_LEFT = "seat.left"
MOVE_UNDONE = "move.undone"
REMATCH = "game.rematch"


class Status(str, enum.Enum):
    """Where a game is in its life. The lobby lists games by it."""

    OPEN = "open"
    """Created; waiting for seats to be taken."""
    ACTIVE = "active"
    """Every seat taken; the engine's setup events are in; commands are accepted."""
    FINISHED = "finished"
    """``game.finished`` is in: the seed is revealed, no command is accepted."""


class ProjectionError(RuntimeError):
    """The stream cannot be folded: a gap, a service event out of place, an engine refusal."""


class EnvelopeLike(Protocol):
    """What the projection reads from ``events.envelope.Envelope`` (read-only: a frozen record will do)."""

    @property
    def version(self) -> int: ...

    @property
    def type(self) -> str: ...

    @property
    def payload(self) -> dict[str, Any]: ...


def _still_sealed(game_id: str, version: int) -> ProjectionError:
    return ProjectionError(
        f"game {game_id!r} version {version}: the event's sealed part is not open (open it with the game's hiding key)"
    )


def is_service_event(event_type: str) -> bool:
    """Service events carry a dot (``game.created``); engine events never do."""
    return "." in event_type


@copyable
@dataclass(frozen=True, slots=True)
class GameProjection(Record):
    """A game folded up to ``version``. Never mutated: :meth:`apply` returns a new one."""

    game_id: str
    engine: Engine[Any] = field(repr=False, compare=False)
    version: int = 0
    status: Status = Status.OPEN
    game: str = ""
    seats: int = 0
    names: tuple[str | None, ...] = ()
    bots: tuple[str | None, ...] = ()
    """Per seat, the name of the bot filling it (``game.seat_taken``'s ``bot``), else ``None``."""
    options: dict[str, Any] = field(default_factory=dict)
    seed_commitment: str = ""
    draw: str = LEGACY_DRAW
    """The draw algorithm ``game.created`` names (``docs/fairness.md``)."""
    chain: str = LEGACY_CHAIN
    """The hash chain's algorithm ``game.created`` names (``docs/store.md``)."""
    hidden: str | None = None
    """The sealing at rest ``game.created`` names (``"donjon-hidden-1"``); ``None``: the game's
    events are stored in clear, as games recorded before it were."""
    contributions: tuple[str | None, ...] = ()
    """Per seat, its contribution to the game's seed (``None`` before it is seated, and in
    games recorded before contributions)."""
    contribution_sources: tuple[str | None, ...] = ()
    """Per seat, who made its contribution: ``"seat"`` (its ``client_seed``) or ``"server"``."""
    head_hash: str = ""
    """The chain hash of the last event folded, when the envelopes carried it."""
    seed: str | None = None
    secret_options: dict[str, Any] | None = None
    """Revealed by ``game.finished`` for games with secret options (see :mod:`service.fairness.seeds`)."""
    summary: dict[str, Any] | None = None
    state: Any = None
    engine_events: int = 0
    """How many engine events are folded: 0 until the setup events are in."""
    created_ts: int = 0
    last_ts: int = 0
    features: Features = field(default_factory=Features)
    clock: Clock | None = None
    """The turn clocks, for a game with ``clock`` once it has started."""
    checkpoints: tuple[Checkpoint, ...] = ()
    """The command batches that may still be undone, oldest first, all of one seat."""
    left: tuple[int, ...] = ()
    """Seats that resigned or timed out (``seat.left``), in order."""
    rematch: str | None = None
    """The id of the rematch game, once ``game.rematch`` links it."""
    rematch_of: str | None = None
    """The game this one is the rematch of (``game.created``'s ``rematch_of``)."""

    @classmethod
    def empty(cls, game_id: str, engine: Engine[Any]) -> GameProjection:
        return cls(game_id=game_id, engine=engine, state=engine.initial_state())

    @classmethod
    def fold(cls, game_id: str, engine: Engine[Any], envelopes: Iterable[EnvelopeLike]) -> GameProjection:
        return cls.empty(game_id, engine).apply_all(envelopes)

    # --- folding -----------------------------------------------------------------------------

    def apply_all(self, envelopes: Iterable[EnvelopeLike]) -> GameProjection:
        """Fold every envelope newer than this projection; older ones are skipped (already in).

        A run of consecutive engine events is folded by :meth:`_fold_run` in local variables,
        with one new projection at its end; service events one at a time (:meth:`_fold_one`)."""
        projection, head = self, self.head_hash
        pending = iter(envelopes)
        envelope: EnvelopeLike | None
        for envelope in pending:
            while envelope is not None and envelope.version > projection.version:
                if projection._runs(envelope):
                    projection, envelope = projection._fold_run(envelope, pending)
                    head = projection.head_hash
                    continue
                projection = projection._fold_one(envelope)
                # An envelope without a hash (a batch folded before the store answered) makes the
                # head unknown (""), never stale; one copy for the run, at its end.
                head = getattr(envelope, "hash", "")
                break
        if head != projection.head_hash:
            projection = projection.but(head_hash=head)
        return projection

    def apply(self, envelope: EnvelopeLike) -> GameProjection:
        """Fold exactly the next envelope (``version + 1``), remembering its chain hash."""
        return self.apply_all((envelope,)) if envelope.version == self.version + 1 else self._fold_one(envelope)

    def _runs(self, envelope: EnvelopeLike) -> bool:
        """Does ``envelope``, the next one, start a run for :meth:`_fold_run`: an engine event
        of a created game that has not finished (anything else is :meth:`_fold_one`'s to fold
        or to refuse)."""
        return (
            "." not in envelope.type
            and envelope.version == self.version + 1
            and self.version > 0
            and self.status is not Status.FINISHED
        )

    def _fold_one(self, envelope: EnvelopeLike) -> GameProjection:
        if envelope.version != self.version + 1:
            raise ProjectionError(
                f"game {self.game_id!r}: expected version {self.version + 1}, got {envelope.version}"
            )
        if getattr(envelope, "sealed", None) is not None:
            raise _still_sealed(self.game_id, envelope.version)
        ts = getattr(envelope, "ts", 0) or self.last_ts
        kind, payload = envelope.type, envelope.payload
        if kind == CREATED:
            return self._created(envelope.version, payload, ts)
        if self.version == 0:
            raise ProjectionError(f"game {self.game_id!r}: the first event is {kind!r}, not {CREATED!r}")
        after = self._apply(envelope, kind, payload, ts)
        if after.features.clock is not None and after.engine_events:
            after = after.but(clock=after._clock_after(after.clock, after.state, ts))
        return after

    def _fold_run(
        self, first: EnvelopeLike, rest: Iterator[EnvelopeLike]
    ) -> tuple[GameProjection, EnvelopeLike | None]:
        """Fold ``first`` (the next version, an engine event) and the engine events after it in
        ``rest``, up to the first service event, which is returned with the projection (``None``:
        ``rest`` is used up). Older envelopes in ``rest`` are skipped, as :meth:`apply_all` does.

        The projection's fields that engine events change are locals here, each event folded
        exactly as one at a time: its undo checkpoints, nothing undoable across a reveal, and
        the turn clocks (:meth:`_clock_after`); seats, bots, status and features cannot change
        inside a run. The undo checkpoints are :class:`projections.checkpoints.RunCheckpoints`."""
        reveals = self.engine.reveals
        timed, clock_after = self.features.clock is not None, self._clock_after
        state, version, engine_events, last_ts = self.state, self.version, self.engine_events, self.last_ts
        clock = self.clock
        marks = RunCheckpoints(self.checkpoints)
        stop: EnvelopeLike | None = None
        folded = first
        for envelope in chain((first,), rest):
            kind = envelope.type
            if envelope.version != version + 1:
                if envelope.version <= version:
                    continue  # already folded
                if "." not in kind:
                    raise ProjectionError(
                        f"game {self.game_id!r}: expected version {version + 1}, got {envelope.version}"
                    )
            if "." in kind:
                stop = envelope
                break
            if getattr(envelope, "sealed", None) is not None:
                raise _still_sealed(self.game_id, envelope.version)
            version += 1
            event = Event(kind, envelope.payload)
            if getattr(envelope, "command", None) is not None:
                marks.command(self._undoer(envelope), version, state, engine_events)
            else:
                marks.continued(version)
            after = self._evolved(state, event, version)
            if marks.standing and reveals(state, event):
                marks.drop()  # nothing random or hidden is ever taken back
            state = after
            engine_events += 1
            last_ts = getattr(envelope, "ts", 0) or last_ts
            if timed:
                clock = clock_after(clock, state, last_ts)
            folded = envelope
        projection = self.but(
            version=version,
            state=state,
            engine_events=engine_events,
            last_ts=last_ts,
            checkpoints=marks.result(version),
            clock=clock,
            head_hash=getattr(folded, "hash", ""),
        )
        return projection, stop

    def _undoer(self, envelope: EnvelopeLike) -> int | None:
        """The human seat that may undo the command batch ``envelope`` starts, else ``None``."""
        actor = getattr(envelope, "actor", None)
        if self.features.undo and actor is not None and 0 <= actor < self.seats and self.bots[actor] is None:
            return int(actor)
        return None

    def _evolved(self, state: Any, event: Event, version: int) -> Any:
        try:
            return self.engine.evolve(state, event)
        except Exception as exc:  # an engine refusing its own event is a broken stream
            raise ProjectionError(
                f"game {self.game_id!r} version {version}: {self.game!r} cannot fold {event.type!r}: {exc!r}"
            ) from exc

    def _clock_after(self, clock: Clock | None, state: Any, ts: int) -> Clock:
        """The turn clocks after an event at ``ts`` left ``state`` (see
        :func:`projections.lifecycle.clock_to`); ``clock`` is ``None`` before the first."""
        clock = clock or clock_started(self.features, self.seats, ts)
        over = self.status is Status.FINISHED
        return clock_to(clock, self.features, self.clock_runners(state), ts, over=over)

    def clock_runners(self, state: Any) -> tuple[int, ...]:
        """The seats whose clocks run in ``state``: every human seat the game waits on (a bot
        seat moves at once: no clock of its own), or, in a game recorded by the :data:`TURN
        <projections.lifecycle.TURN>` rule, the engine's ``clock_seat`` alone; ``()`` once the
        game is over or before it is active."""
        if self.status is not Status.ACTIVE or self.engine.is_terminal(state):
            return ()
        bots = self.bots
        if self.features.clock_runs == TURN:
            seat = self.engine.clock_seat(state)
            return () if seat is None or bots[seat] is not None else (seat,)
        return tuple(sorted(seat for seat in set(self.engine.waiting_for(state)) if bots[seat] is None))

    def _apply(self, envelope: EnvelopeLike, kind: str, payload: dict[str, Any], ts: int) -> GameProjection:
        if kind == REMATCH:
            if self.status is not Status.FINISHED:
                raise ProjectionError(f"game {self.game_id!r}: {REMATCH!r} before the end")
            return self.but(version=envelope.version, rematch=payload["id"], last_ts=ts)
        if self.status is Status.FINISHED:
            raise ProjectionError(f"game {self.game_id!r}: {kind!r} after {FINISHED!r}")
        if kind == SEAT_TAKEN:
            return self._seat_taken(envelope.version, payload, ts)
        if kind == FINISHED:
            return self.but(
                version=envelope.version,
                status=Status.FINISHED,
                seed=payload.get("seed"),
                secret_options=payload.get("secret_options"),
                summary=payload.get("summary"),
                last_ts=ts,
                checkpoints=(),
            )
        if kind == CLOCK_EXPIRED:
            return self.but(version=envelope.version, checkpoints=(), last_ts=ts)
        if kind == SEAT_LEFT:
            return self._seat_left(envelope.version, payload, ts)
        if kind == MOVE_UNDONE:
            return self._undone(envelope.version, payload, ts)
        raise ProjectionError(f"game {self.game_id!r}: unknown service event {kind!r}")

    def _seat_left(self, version: int, payload: dict[str, Any], ts: int) -> GameProjection:
        seat = payload["seat"]
        if not 0 <= seat < self.seats or seat in self.left:
            raise ProjectionError(f"game {self.game_id!r}: seat {seat!r} cannot leave at {version}")
        bots = self.bots
        if payload.get("bot") is not None:
            bots = bots[:seat] + (str(payload["bot"]),) + bots[seat + 1 :]
        return self.but(
            version=version, bots=bots, left=(*self.left, seat), checkpoints=(), last_ts=ts
        )

    def _undone(self, version: int, payload: dict[str, Any], ts: int) -> GameProjection:
        """Restore the state before the reverted versions (the newest checkpoint)."""
        top = self.checkpoints[-1] if self.checkpoints else None
        if top is None or (top.seat, top.first, top.last) != (payload["seat"], payload["from"], payload["to"]):
            raise ProjectionError(f"game {self.game_id!r}: {MOVE_UNDONE!r} at {version} reverts nothing undoable")
        return self.but(
            version=version,
            state=top.state,
            engine_events=top.engine_events,
            checkpoints=self.checkpoints[:-1],
            last_ts=ts,
        )

    def _created(self, version: int, payload: dict[str, Any], ts: int) -> GameProjection:
        if self.version != 0:
            raise ProjectionError(f"game {self.game_id!r}: {CREATED!r} at version {version}")
        seats = int(payload["seats"])
        return self.but(
            version=version,
            game=payload["game"],
            seats=seats,
            names=(None,) * seats,
            bots=(None,) * seats,
            options=dict(payload.get("options") or {}),
            seed_commitment=payload["seed_commitment"],
            features=Features.of_created(payload),
            rematch_of=payload.get("rematch_of"),
            draw=str(payload.get("draw", LEGACY_DRAW)),
            chain=str(payload.get("chain", LEGACY_CHAIN)),
            hidden=None if payload.get("hidden") is None else str(payload["hidden"]),
            contributions=(None,) * seats,
            contribution_sources=(None,) * seats,
            created_ts=ts,
            last_ts=ts,
        )

    def _seat_taken(self, version: int, payload: dict[str, Any], ts: int) -> GameProjection:
        seat = payload["seat"]
        if not 0 <= seat < self.seats or self.names[seat] is not None:
            raise ProjectionError(f"game {self.game_id!r}: seat {seat!r} cannot be taken at {version}")
        names = self.names[:seat] + (payload["name"],) + self.names[seat + 1 :]
        bots = self.bots
        if payload.get("bot") is not None:
            bots = bots[:seat] + (str(payload["bot"]),) + bots[seat + 1 :]
        contributions, sources = self.contributions, self.contribution_sources
        if payload.get("seed_contribution") is not None:
            contributions = contributions[:seat] + (str(payload["seed_contribution"]),) + contributions[seat + 1 :]
            source = payload.get("seed_contribution_from")
            sources = sources[:seat] + (None if source is None else str(source),) + sources[seat + 1 :]
        status = Status.ACTIVE if all(name is not None for name in names) else Status.OPEN
        return self.but(
            version=version, names=names, bots=bots, contributions=contributions, contribution_sources=sources,
            status=status, last_ts=ts,
        )

    # --- questions ---------------------------------------------------------------------------

    @property
    def free_seats(self) -> list[int]:
        return [seat for seat, name in enumerate(self.names) if name is None]

    @property
    def started(self) -> bool:
        return self.status is not Status.OPEN

    def is_terminal(self) -> bool:
        """The engine says the game is over (``game.finished`` may still be owed)."""
        return self.status is Status.ACTIVE and bool(self.engine.is_terminal(self.state))

    def undo_owed(self, seat: int) -> Checkpoint | None:
        """The checkpoint ``seat`` may undo now, by the policy (docs/protocol.md, Undo): undo is
        on, the game is active, the newest undoable batch is this seat's (no other seat acted and
        nothing was revealed since) and this seat is still to act."""
        if not self.features.undo or self.status is not Status.ACTIVE or not self.checkpoints:
            return None
        if seat in self.left or self.engine.is_terminal(self.state):
            return None
        top = self.checkpoints[-1]
        if top.seat != seat or seat not in self.engine.waiting_for(self.state):
            return None
        return top

    @property
    def has_bots(self) -> bool:
        return any(bot is not None for bot in self.bots)

    def seat_list(self) -> list[dict[str, Any]]:
        """The seats as clients see them: ``[{"seat": 0, "name": "ann"}, {"seat": 1, "name": null}]``;
        a bot's seat also names its bot: ``{"seat": 1, "name": "greedy bot", "bot": "greedy"}``;
        a seat whose contribution to the game's seed is in shows it (``seed_contribution``), so
        each seat can see its own value was included."""
        seats = []
        for seat, (name, bot) in enumerate(zip(self.names, self.bots)):
            entry: dict[str, Any] = {"seat": seat, "name": name}
            if bot is not None:
                entry["bot"] = bot
            if self.contributions and self.contributions[seat] is not None:
                entry["seed_contribution"] = self.contributions[seat]
            seats.append(entry)
        return seats
