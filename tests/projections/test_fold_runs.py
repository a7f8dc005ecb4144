"""Folding a run of engine events at once gives exactly what folding them one at a time gives.

``GameProjection.apply_all`` folds consecutive engine events in local variables
(``_fold_run``); ``apply`` called envelope by envelope builds a projection after each, and
:func:`reference_fold` folds each engine event as the projection did before runs. Random
games of every real engine, made by the service's own pure decisions (``service.play.decisions``)
with bot seats, undo on and off, Fischer and per-move clocks, undos, resignations, timeouts
and a rematch link, must fold to equal projections, field by field (checkpoints and clocks
included), whether the log is folded whole, one envelope at a time or in random slices.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any

import pytest

import games
from games.base import Command, Engine, Event, RuleError
from projections.game import FINISHED, GameProjection, Status
from projections.lifecycle import BOT, FORFEIT, OWING, TURN, Checkpoint, Features, clock_started, clock_to
from service.play import decisions

ENGINES = games.default_engines()
SEED = bytes(range(32))
COMMANDS = 120
"""Most commands per game: enough for many batches, undos and reveals, not a whole long game."""


@dataclass(frozen=True, slots=True)
class Env:
    """An envelope as the store gives it (the fields the projection reads)."""

    version: int
    type: str
    payload: dict[str, Any]
    actor: int | None
    ts: int
    hash: str
    command: Command | None = None


class Log:
    """A game's envelopes being written, with the projection folded one envelope at a time."""

    def __init__(self, game_id: str, engine: Engine, rng: random.Random) -> None:
        self.rng = rng
        self.envelopes: list[Env] = []
        self.projection = GameProjection.empty(game_id, engine)
        self.now = 1_000_000

    def append(self, events: list[Event], actor: int | None = None, command: Command | None = None) -> None:
        self.now += self.rng.choice((0, 1, 250, 4_000, 70_000))
        for i, event in enumerate(events):
            version = len(self.envelopes) + 1
            # Some envelopes carry no time (the projection keeps the last) or no hash (unknown head).
            ts = 0 if self.rng.random() < 0.05 else self.now
            digest = "" if self.rng.random() < 0.05 else f"h{version}"
            envelope = Env(version, event.type, event.payload, actor, ts, digest, command if i == 0 else None)
            self.envelopes.append(envelope)
            self.projection = self.projection.apply(envelope)


def random_features(rng: random.Random) -> Features:
    clock = rng.choice((None, {"initial_ms": 60_000, "increment_ms": 5_000}, {"per_move_ms": 20_000}))
    runs = rng.choice((OWING, TURN))  # games recorded before every owing seat ran a clock fold too
    return Features(clock=clock, on_timeout=rng.choice((FORFEIT, BOT)), undo=rng.random() < 0.7, clock_runs=runs)


def random_game(name: str, seed: int) -> list[Env]:
    """A game of ``name``: seats (some bots), then random commands, undos, resignations and
    timeouts until it ends or :data:`COMMANDS` commands are in."""
    rng = random.Random(seed)
    engine = ENGINES[name]
    seats = rng.randint(engine.min_seats, min(engine.max_seats, 4))
    options = engine.normalize_options({}, seats)
    log = Log(f"{name}-{seed}", engine, rng)
    bots = {seat: "random" for seat in range(seats) if rng.random() < 0.25 and seat}
    created = decisions.game_created(name, engine, options, seats, SEED, random_features(rng))
    batch = decisions.creation_batch(engine, created, bots, seed=SEED, game_id=log.projection.game_id, options=options)
    log.append(batch, command=decisions.creation_command(bots))
    for seat in range(seats):
        if seat not in bots:
            command = decisions.seat_command(f"p{seat}")
            batch = decisions.seat_batch(log.projection, seat, f"p{seat}", seed=SEED, options=options)
            log.append(batch, actor=seat, command=command)
    for _ in range(COMMANDS):
        if log.projection.status is not Status.ACTIVE:
            break
        step(log, options)
    if log.projection.status is Status.FINISHED and rng.random() < 0.5:
        command = decisions.rematch_command("rematch-id")
        log.append(decisions.rematch_batch(command), command=command)
    return log.envelopes


def step(log: Log, options: dict[str, Any]) -> None:
    """One append on top of the log: a timeout, a resignation, an undo or a legal command."""
    before, rng = log.projection, log.rng
    engine = before.engine
    waiting = engine.waiting_for(before.state)  # a seat that left is played by its bot
    if not waiting:
        raise AssertionError(f"{before.game} waits on nobody at version {before.version}")
    seat = rng.choice(waiting)
    humans = [s for s in range(before.seats) if before.bots[s] is None and s not in before.left]
    running = rng.choice(before.clock.running) if before.clock is not None and before.clock.running else None
    if running is not None and before.bots[running] is None and rng.random() < 0.03:
        move = rng.choice(engine.legal_moves(before.state, running))
        command = decisions.timeout_command(running, move)
        batch = decisions.timeout_batch(before, running, seed=SEED, options=options, move=move, takeover="random")
        log.append(batch, command=command)
        return
    if humans and rng.random() < 0.01:
        quitter = rng.choice(humans)
        command = {"type": "resign"}
        log.append(decisions.command_batch(before, quitter, command, seed=SEED, options=options,
                                           takeover="random"), actor=quitter, command=command)
        return
    if decisions.undo_refusal(before, seat) is None and rng.random() < 0.3:
        command = {"type": "undo"}
        log.append(decisions.undo_batch(before, seat), actor=seat, command=command)
        return
    command = rng.choice(engine.legal_moves(before.state, seat))
    try:
        batch = decisions.command_batch(before, seat, command, seed=SEED, options=options)
    except RuleError as exc:  # a legal move the rules then refuse is a bug of the engine
        raise AssertionError(f"{before.game}: legal {command!r} refused: {exc}") from exc
    log.append(batch, actor=seat, command=command)


def fields_of(projection: GameProjection) -> dict[str, Any]:
    return {f.name: getattr(projection, f.name) for f in dataclasses.fields(projection) if f.name != "engine"}


def one_at_a_time(game_id: str, engine: Engine, envelopes: list[Env]) -> GameProjection:
    projection = GameProjection.empty(game_id, engine)
    for envelope in envelopes:
        projection = projection.apply(envelope)
    return projection


def reference_fold(game_id: str, engine: Engine, envelopes: list[Env]) -> GameProjection:
    """The fold as it was written before runs: service events by ``apply``, each engine event
    by :func:`reference_engine_event`, a new projection after every envelope."""
    projection = GameProjection.empty(game_id, engine)
    for envelope in envelopes:
        if "." in envelope.type:
            projection = projection.apply(envelope)
        else:
            projection = reference_engine_event(projection, envelope)
    return projection


def reference_engine_event(before: GameProjection, envelope: Env) -> GameProjection:
    """One engine event folded by the rules of docs/protocol.md (Undo) and projections.lifecycle,
    independently of ``GameProjection._fold_run``."""
    assert envelope.version == before.version + 1 and before.status is not Status.FINISHED
    engine, event = before.engine, Event(envelope.type, envelope.payload)
    checkpoints = before.checkpoints
    if envelope.command is None:
        if checkpoints:
            checkpoints = (*checkpoints[:-1], dataclasses.replace(checkpoints[-1], last=envelope.version))
    elif envelope.actor is None or not before.features.undo or before.bots[envelope.actor] is not None:
        checkpoints = ()
    else:
        kept = checkpoints if checkpoints and checkpoints[-1].seat == envelope.actor else ()
        checkpoints = (*kept, Checkpoint(envelope.actor, envelope.version, envelope.version, before.state,
                                         before.engine_events))
    if checkpoints and engine.reveals(before.state, event):
        checkpoints = ()
    ts = envelope.ts or before.last_ts
    state = engine.evolve(before.state, event)
    clock = before.clock
    if before.features.clock is not None:
        runners: tuple[int, ...] = ()
        if before.status is Status.ACTIVE and not engine.is_terminal(state):
            turn = engine.clock_seat(state)
            if before.features.clock_runs == TURN:
                owing = [] if turn is None else [turn]
            else:
                owing = engine.waiting_for(state)
            runners = tuple(sorted(seat for seat in set(owing) if before.bots[seat] is None))
        clock = clock_to(clock or clock_started(before.features, before.seats, ts), before.features, runners, ts)
    return dataclasses.replace(
        before, version=envelope.version, state=state, engine_events=before.engine_events + 1, last_ts=ts,
        checkpoints=checkpoints, clock=clock, head_hash=envelope.hash,
    )


def in_slices(game_id: str, engine: Engine, envelopes: list[Env], rng: random.Random) -> GameProjection:
    """``apply_all`` on random slices, each overlapping the last (older envelopes are skipped)."""
    projection, start = GameProjection.empty(game_id, engine), 0
    while start < len(envelopes):
        end = start + rng.randint(1, 40)
        projection = projection.apply_all(envelopes[max(0, start - rng.randint(0, 3)) : end])
        start = end
    return projection


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("name", sorted(ENGINES))
def test_a_run_folded_at_once_is_exactly_the_events_folded_one_at_a_time(name: str, seed: int) -> None:
    envelopes = random_game(name, seed)
    engine, game_id = ENGINES[name], f"{name}-{seed}"
    expected = fields_of(reference_fold(game_id, engine, envelopes))
    assert fields_of(one_at_a_time(game_id, engine, envelopes)) == expected
    assert fields_of(GameProjection.fold(game_id, engine, envelopes)) == expected
    assert fields_of(in_slices(game_id, engine, envelopes, random.Random(seed))) == expected
    # Every prefix too: a run may end anywhere (the cache folds whatever the stream returned).
    rng = random.Random(seed)
    for cut in sorted(rng.sample(range(1, len(envelopes)), min(8, len(envelopes) - 1))):
        assert fields_of(GameProjection.fold(game_id, engine, envelopes[:cut])) == fields_of(
            one_at_a_time(game_id, engine, envelopes[:cut])
        )


def test_the_random_games_cover_what_the_runs_must_get_right() -> None:
    """The games above hold undos, checkpoints kept across events, clocks, seats that left and
    finished games (else the test above would prove little)."""
    kinds: set[str] = set()
    checkpointed = clocked = 0
    for name in sorted(ENGINES):
        for seed in range(10):
            envelopes = random_game(name, seed)
            kinds.update(envelope.type for envelope in envelopes)
            projection = GameProjection.empty(f"{name}-{seed}", ENGINES[name])
            for envelope in envelopes:
                projection = projection.apply(envelope)
                checkpointed += len(projection.checkpoints) > 1
            clocked += projection.clock is not None
    assert {"move.undone", "seat.left", "clock.expired", FINISHED, "game.rematch"} <= kinds
    assert checkpointed and clocked
