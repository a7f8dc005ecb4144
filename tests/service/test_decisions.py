"""The command path's decision folds its batch once, and decides exactly what replay re-runs."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import games
from games.base import BadCommand, Event, RuleError, owing_seat
from projections.game import FINISHED, GameProjection, Status
from service.fairness import seeds
from service.play import decisions
from tests.service.bad_args import COMMAND_ARGS, names_one_of, plain_args, wrong_args
from tests.tinygame import TINY, TinyState

SEED = bytes(range(32))
GAME = "g1"


class CountingEngine:
    """The tiny engine, counting its ``evolve`` calls."""

    def __init__(self) -> None:
        self.evolved = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(TINY, name)

    def evolve(self, state: TinyState, event: Event) -> TinyState:
        self.evolved += 1
        return TINY.evolve(state, event)


def _started(engine: Any, name: str = "tiny", seats: int = 2) -> tuple[GameProjection, dict[str, Any]]:
    options = engine.normalize_options({}, seats)
    created = decisions.game_created(name, engine, options, seats, SEED)
    events = decisions.creation_batch(engine, created, {}, seed=SEED, game_id=GAME, options=options)
    projection = decisions.Batch(GAME, events, 0, 1).folded(GameProjection.empty(GAME, engine))
    for seat in range(seats):
        seated = decisions.seat_batch(projection, seat, f"p{seat}", seed=SEED, options=options)
        projection = decisions.Batch(GAME, seated, projection.version, 1).folded(projection)
    return projection, options


def _decide(projection: GameProjection, options: dict[str, Any], command: dict[str, Any]) -> decisions.Batch:
    seat = TINY.waiting_for(projection.state)[0]
    return decisions.command_decision(
        projection, seat, command, seed=SEED, options=options, ts=2, command_id=f"{seat}:{projection.version}"
    )


def test_a_decided_batch_is_folded_once_and_the_commit_takes_that_fold():
    engine = CountingEngine()
    projection, options = _started(engine)
    assert projection.status is Status.ACTIVE
    engine.evolved = 0
    batch = _decide(projection, options, {"type": "draw", "args": {}})
    assert engine.evolved == len(batch.events) == 1  # one engine event, one evolve
    after = batch.applied_to(projection)  # what GameCache.commit folds
    assert after is batch.after and engine.evolved == 1
    assert after.version == projection.version + 1 and after.last_ts == 2
    assert after == batch.folded(projection)  # the same projection a second fold would give


def test_every_batch_is_the_one_replay_re_runs_and_the_last_carries_game_finished():
    for game in range(5):
        projection, options = _started(TINY)
        rng = random.Random(game)
        batch = None
        while projection.status is Status.ACTIVE:
            seat = TINY.waiting_for(projection.state)[0]
            command = rng.choice(TINY.legal_moves(projection.state, seat))
            batch = _decide(projection, options, command)
            replayed = decisions.command_batch(projection, seat, command, seed=SEED, options=options)
            assert [(e.type, e.payload) for e in batch.events] == [(e.type, e.payload) for e in replayed]
            assert batch.after is not None
            assert batch.after == batch.folded(projection)
            projection = batch.after
        assert batch is not None and batch.events[-1].type == FINISHED
        assert projection.status is Status.FINISHED and projection.seed == SEED.hex()
        assert batch.events[-1].payload == seeds.finished_payload(SEED, {}, TINY.summary(projection.state))


def test_the_service_commands_are_folded_when_committed():
    projection, options = _started(TINY)
    batch = decisions.command_decision(
        projection, 0, {"type": "resign"}, seed=SEED, options=options, ts=3, command_id="0:r", takeover="random"
    )
    assert batch.after is None  # rare: GameCache.commit folds it
    assert [event.type for event in batch.events] == ["seat.left", FINISHED]
    assert batch.applied_to(projection).status is Status.FINISHED


def test_the_game_seed_is_remembered_and_unchanged():
    projection, _options = _started(TINY)
    expected = seeds.game_seed(SEED, projection.contributions)
    assert decisions.drawing_seed(projection, SEED) == expected
    assert decisions.drawing_seed(projection, SEED) is decisions.drawing_seed(projection, SEED)
    assert decisions.drawing_seed(projection, bytes(32)) == seeds.game_seed(bytes(32), projection.contributions)


ENGINES = games.default_engines()
PLAYED: dict[tuple[str, int], tuple[GameProjection, dict[str, Any]]] = {}


def _played(name: str, moves: int) -> tuple[GameProjection, dict[str, Any]]:
    """A game of ``name`` (three seats where it may have them) after ``moves`` random legal
    commands, or at its end; remembered, so that examples share the work."""
    if (name, moves) not in PLAYED:
        engine = ENGINES[name]
        projection, options = _started(engine, name, min(3, engine.max_seats))
        rng = random.Random(moves)
        for _ in range(moves):
            seat = owing_seat(engine, projection.state, projection.seats)
            if seat is None or projection.status is not Status.ACTIVE:
                break
            command = rng.choice(engine.legal_moves(projection.state, seat))
            batch = decisions.command_decision(projection, seat, command, seed=SEED, options=options, ts=2,
                                               command_id=None)
            projection = batch.applied_to(projection)
        PLAYED[name, moves] = projection, options
    return PLAYED[name, moves]


@given(data=st.data())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
def test_wrong_args_of_any_command_of_any_game_are_a_bad_command_naming_one(data: st.DataObject) -> None:
    """Args a command does not take, of the wrong kind (floats, objects, lists...) or missing, at
    every command of every game (the service's resign and undo too), on states of random games:
    the seat the game waits on gets ``bad_command`` naming a wrong arg, any other seat
    ``not_your_turn`` or that; nothing is ever decided."""
    name = data.draw(st.sampled_from(sorted(COMMAND_ARGS)), label="game")
    projection, options = _played(name, data.draw(st.integers(0, 40), label="moves"))
    engine = projection.engine
    if projection.status is not Status.ACTIVE:
        return
    owing = owing_seat(engine, projection.state, projection.seats)
    seat = data.draw(st.sampled_from([owing, *range(projection.seats)]), label="seat")
    kind = data.draw(st.sampled_from(sorted(COMMAND_ARGS[name])), label="command")
    takes = COMMAND_ARGS[name][kind]
    legal = [move["args"] for move in engine.legal_moves(projection.state, seat) if move["type"] == kind]
    base = data.draw(st.sampled_from(legal)) if legal else plain_args(takes)
    args, wrong = data.draw(wrong_args(takes, base), label="args")
    with pytest.raises(RuleError) as refused:
        decisions.command_decision(projection, seat, {"type": kind, "args": args}, seed=SEED, options=options,
                                   ts=3, command_id="c", takeover="random")
    code, message = refused.value.code, refused.value.message
    if seat == owing or kind in decisions.SERVICE_COMMANDS:
        assert code == "bad_command", (kind, args, code, message)
    else:
        assert code in ("bad_command", "not_your_turn"), (kind, args, code, message)
    if code == "bad_command":
        assert names_one_of(message, wrong), (kind, args, message)


@pytest.mark.parametrize("kind", ["resign", "undo", "pass"])
def test_args_null_is_refused_for_the_service_commands_and_the_games_alike(kind: str) -> None:
    """protocol.md: ``args`` is ``{}`` or left out; ``null`` is not an object."""
    projection, options = _played("carcassonne", 1)
    with pytest.raises(BadCommand, match="must be an object"):
        decisions.command_decision(projection, 0, {"type": kind, "args": None}, seed=SEED, options=options, ts=3,
                                   command_id="c", takeover="random")
    kept = decisions.command_decision(projection, 1, {"type": "resign"}, seed=SEED, options=options, ts=3,
                                      command_id="c", takeover="random")
    assert kept.events[0].type == "seat.left"  # no args at all is no args
