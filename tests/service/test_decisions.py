"""The command path's decision folds its batch once, and decides exactly what replay re-runs."""

from __future__ import annotations

import random
from typing import Any

from games.base import Event
from projections.game import FINISHED, GameProjection, Status
from service import decisions, seeds
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


def _started(engine: Any) -> tuple[GameProjection, dict[str, Any]]:
    options = TINY.normalize_options({}, 2)
    created = decisions.game_created("tiny", engine, options, 2, SEED)
    events = decisions.creation_batch(engine, created, {}, seed=SEED, game_id=GAME, options=options)
    projection = decisions.Batch(GAME, events, 0, 1).folded(GameProjection.empty(GAME, engine))
    for seat in range(2):
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
