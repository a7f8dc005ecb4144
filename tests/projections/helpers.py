"""Envelopes for projection unit tests, without a store: a tiny game's stream as literals."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

from games.base import Event, derive_rng, fold
from tests.tinygame import TINY

SEED = bytes(range(32))


@dataclass(frozen=True)
class Env:
    version: int
    type: str
    payload: dict[str, Any]
    actor: int | None = None
    ts: int = 1000
    command: dict[str, Any] | None = field(default=None)


def opening(game_id: str = "g1", target: int = 6) -> list[Env]:
    """created, two seats (the second starts the game: started + two dealt)."""
    envs = [
        Env(1, "game.created", {"game": "tiny", "options": {"target": target}, "seats": 2,
                                "seed_commitment": hashlib.sha256(SEED).hexdigest()}),
        Env(2, "game.seat_taken", {"seat": 0, "name": "ann"}, actor=0),
        Env(3, "game.seat_taken", {"seat": 1, "name": "bob"}, actor=1),
    ]
    for event in TINY.setup({"target": target}, 2, derive_rng(SEED, game_id, 2)):
        envs.append(Env(len(envs) + 1, event.type, event.payload, actor=1))
    return envs


def random_game(rng: random.Random, game_id: str = "g1", target: int = 6) -> list[Env]:
    """A whole tiny game, each seat playing a uniformly random legal command."""
    envs = opening(game_id, target)
    state = fold(TINY, [Event(e.type, e.payload) for e in envs[3:]])
    while not TINY.is_terminal(state):
        seat = state.turn
        cmd = rng.choice(TINY.legal_moves(state, seat))
        for event in TINY.decide(state, seat, cmd, derive_rng(SEED, game_id, len(envs))):
            envs.append(Env(len(envs) + 1, event.type, event.payload, actor=seat))
            state = TINY.evolve(state, event)
    envs.append(Env(len(envs) + 1, "game.finished", {"seed": SEED.hex(), "summary": TINY.summary(state)}))
    return envs
