"""One append as the service decides it (:class:`Batch`), and what every decision shares: the
random source of a decision (:func:`decision_rng`, keyed by the game seed), the engine's events
for a command checked against the engine contract (:func:`engine_events`), and the game's end
(:func:`finished_event`). Pure, as :mod:`service.play.decisions`, which builds on it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.base import Command, Engine, Event, Rng, fold
from projections.game import FINISHED, LEGACY_DRAW, GameProjection
from service.fairness import seeds
from service.fairness.draw_schemes import rng_for

__all__ = [
    "Appended",
    "Batch",
    "EngineFault",
    "decision_rng",
    "drawing_seed",
    "engine_batch",
    "engine_events",
    "finished_event",
    "fold_batch",
]


class EngineFault(RuntimeError):
    """An engine broke its contract while deciding (no events, or a service event type): a bug."""


@dataclass(frozen=True, slots=True)
class Batch:
    """One append as the service decided it: the events and what the store records with them."""

    game_id: str
    events: Sequence[Event]
    expected_version: int
    """The version the batch was decided on; the store refuses it if the game moved since."""
    ts: int
    """Milliseconds since the epoch, read by the caller when it decided."""
    actor: int | None = None
    command: Command | None = None
    command_id: str | None = None
    after: GameProjection | None = field(default=None, repr=False, compare=False)
    """The projection after the batch when the decision folded it already (:func:`command_decision`),
    so that :meth:`applied_to` does not fold it again; ``None``: not folded yet."""

    def applied_to(self, projection: GameProjection) -> GameProjection:
        """``projection`` (at ``expected_version``) with this batch folded in, as the stream will
        have it: :attr:`after` when the decision folded it on top of that version already."""
        if self.after is not None and projection.version == self.expected_version:
            return self.after
        return self.folded(projection)

    def folded(self, projection: GameProjection, first: int = 0) -> GameProjection:
        """``projection`` with the batch's events from index ``first`` on folded in (``projection``
        stands after those before ``first``). Its ``head_hash`` stays ``projection``'s: the new
        head is known once the store has the batch, and :meth:`GameCache.commit
        <service.play.cache.GameCache.commit>` sets it then (one copy of the projection, not two)."""
        return fold_batch(projection, self.events, first, self.expected_version, self.ts, self.actor, self.command)


def fold_batch(
    projection: GameProjection,
    events: Sequence[Event],
    first: int,
    expected_version: int,
    ts: int,
    actor: int | None,
    command: Command | None,
) -> GameProjection:
    """See :meth:`Batch.folded`."""
    head = projection.head_hash
    return projection.apply_all(
        Appended(expected_version + i + 1, event.type, event.payload, ts, actor, command if i == 0 else None, head)
        for i, event in enumerate(events[first:], first)
    )


@dataclass(slots=True)
class Appended:
    """An event of a batch, shaped like an envelope for the projection."""

    version: int
    type: str
    payload: dict[str, Any]
    ts: int
    actor: int | None = None
    command: Command | None = None
    hash: str = ""
    """The chain head the fold keeps: the one before the batch (see :meth:`Batch.folded`)."""


GAME_SEEDS_KEPT = 4096
"""Game seeds :func:`drawing_seed` keeps (least recently used out): one HMAC per game, not one
per decision, since a game's seed changes only while its seats are taken."""


def drawing_seed(projection: GameProjection, server_seed: bytes) -> bytes:
    """The key of every draw of the game: the game seed of the seats' contributions, or the
    server seed in a game recorded before them."""
    if projection.draw == LEGACY_DRAW:
        return server_seed
    return _game_seed(server_seed, projection.contributions)


@functools.lru_cache(maxsize=GAME_SEEDS_KEPT)
def _game_seed(server_seed: bytes, contributions: tuple[str | None, ...]) -> bytes:
    """:func:`service.fairness.seeds.game_seed`, a pure function of its arguments, remembered."""
    return seeds.game_seed(server_seed, contributions)


def decision_rng(projection: GameProjection, server_seed: bytes, *, version: int | None = None) -> Rng:
    """The random source of the engine's decision taken on top of ``projection``: the game's
    dealer (``donjon-draw-2``), or the stream of its game id at its version unless ``version``
    names another (a timeout's move is decided on top of the ``clock.expired`` the same append
    puts before it)."""
    return rng_for(
        projection.draw,
        drawing_seed(projection, server_seed),
        projection.game_id,
        projection.version if version is None else version,
    )


def engine_batch(
    before: GameProjection, seat: int, command: Command, version: int, *, seed: bytes, options: Mapping[str, Any]
) -> list[Event]:
    """The engine's events for ``command`` decided on top of ``version`` (+ ``game.finished``)."""
    events = engine_events(before, seat, command, version, seed=seed)
    finished = finished_event(before.engine, fold(before.engine, events, before.state), seed=seed, options=options)
    return events if finished is None else [*events, finished]


def engine_events(before: GameProjection, seat: int, command: Command, version: int, *, seed: bytes) -> list[Event]:
    """What ``engine.decide`` makes of ``command`` on top of ``version``, checked against the
    engine contract (:class:`EngineFault`)."""
    engine = before.engine
    events = list(engine.decide(before.state, seat, command, decision_rng(before, seed, version=version)))
    if not events:
        raise EngineFault(f"{before.game} decided no events for {command!r}")
    for event in events:
        if "." in event.type:
            raise EngineFault(f"{before.game} produced a service event type {event.type!r}")
    return events


def finished_event(engine: Engine[Any], after: Any, *, seed: bytes, options: Mapping[str, Any]) -> Event | None:
    """``game.finished`` when the engine state ``after`` is terminal: the seed and the secret
    options revealed, the engine's summary; ``None`` while the game goes on."""
    if not engine.is_terminal(after):
        return None
    secret = seeds.split_options(engine, options)[1]
    return Event(FINISHED, seeds.finished_payload(seed, secret, engine.summary(after)))
