"""The service's own decisions: what one append of the service holds, as a pure function of
what it is given (no I/O, no clock: the caller passes the time in).

Three kinds of batch come from here, and from nowhere else:

* the **creation batch**: ``game.created`` with the public options and the seed commitment,
  one ``game.seat_taken`` (with ``bot``) per bot seat, and the engine's setup when bots fill
  every seat; it records the command ``create_game`` when it seats bots;
* the **seat batch**: one ``game.seat_taken``, plus the setup when it takes the last seat;
  it records the command ``take_seat``;
* the **command batch**: what ``engine.decide`` makes of a command, plus ``game.finished``
  (the seed and secret options revealed) when those events end the game.

Randomness follows one rule: the decision taken on top of stream version ``v`` gets
``derive_rng(seed, game_id, v)``. Setup is decided on top of the last seat's version minus one,
the version the seat batch (or, for a game of bots only, the last bot seat) starts from.

The command path (:mod:`service.seating`, :mod:`service.commands`, the bot scheduler) builds
every append with these functions, and ``donjon replay`` (:mod:`service.replay`) re-runs them
on the recorded log, so the two cannot drift apart.

>>> creation_command({1: "greedy"})
{'type': 'create_game', 'args': {'bots': {'1': 'greedy'}}}
>>> creation_bots(creation_command({1: "greedy"}))
{1: 'greedy'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games.base import Command, Engine, Event, derive_rng, fold
from projections.game import CREATED, FINISHED, SEAT_TAKEN, GameProjection
from service import seeds

__all__ = [
    "CREATE_GAME",
    "TAKE_SEAT",
    "Batch",
    "EngineFault",
    "bot_seat_name",
    "command_batch",
    "creation_batch",
    "creation_bots",
    "creation_command",
    "finished_event",
    "game_created",
    "seat_batch",
    "seat_command",
]

TAKE_SEAT = "take_seat"
"""The ``command.type`` recorded on a seat batch, so replay and auditors see where batches begin."""
CREATE_GAME = "create_game"
"""The ``command.type`` recorded on a creation batch that seats bots: ``{"bots": {"1": "greedy"}}``."""


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

    def applied_to(self, projection: GameProjection) -> GameProjection:
        """``projection`` (at ``expected_version``) with this batch folded in, as the stream will have it."""
        return projection.apply_all(
            _Appended(self.expected_version + i + 1, event.type, event.payload, self.ts, self.actor)
            for i, event in enumerate(self.events)
        )


@dataclass(slots=True)
class _Appended:
    """An event of a batch, shaped like an envelope for the projection."""

    version: int
    type: str
    payload: dict[str, Any]
    ts: int
    actor: int | None = None


def bot_seat_name(bot: str) -> str:
    """The display name of a seat a bot fills."""
    return f"{bot} bot"


# --- creation --------------------------------------------------------------------------------


def game_created(game: str, engine: Engine, options: Mapping[str, Any], seats: int, seed: bytes) -> Event:
    """``game.created``: the public part of the normalized ``options`` and the commitment to the
    seed and the secret part (:mod:`service.seeds`)."""
    public, secret = seeds.split_options(engine, options)
    commitment = seeds.commitment(seed, secret)
    return Event(CREATED, {"game": game, "options": public, "seats": seats, "seed_commitment": commitment})


def creation_command(bots: Mapping[int, str]) -> Command | None:
    """The command recorded on a creation batch: ``create_game`` with the bot seats, or ``None``
    (a game without bots records none)."""
    if not bots:
        return None
    return {"type": CREATE_GAME, "args": {"bots": {str(seat): name for seat, name in sorted(bots.items())}}}


def creation_bots(command: Command | None) -> dict[int, str] | None:
    """The bot seats a recorded creation command names (the inverse of :func:`creation_command`);
    ``None`` when it is not a ``create_game`` command."""
    if not isinstance(command, dict) or command.get("type") != CREATE_GAME:
        return None
    bots = (command.get("args") or {}).get("bots")
    if not isinstance(bots, dict):
        return None
    return {int(seat): name for seat, name in sorted(bots.items(), key=lambda item: int(item[0]))}


def creation_batch(
    engine: Engine,
    created: Event,
    bots: Mapping[int, str],
    *,
    seed: bytes,
    game_id: str,
    options: Mapping[str, Any],
) -> list[Event]:
    """``created``, one seat per bot (in seat order), and the setup when the bots fill every seat."""
    seated = sorted(bots.items())
    events = [created]
    events += [Event(SEAT_TAKEN, {"seat": seat, "name": bot_seat_name(name), "bot": name}) for seat, name in seated]
    seats = created.payload.get("seats")
    if len(seated) == seats:
        # Setup decides on top of the last seat's version minus one, as for a human's seat.
        events += engine.setup(dict(options), seats, derive_rng(seed, game_id, len(events) - 1))
    return events


# --- seats -----------------------------------------------------------------------------------


def seat_command(name: str) -> Command:
    """The command recorded on a seat batch."""
    return {"type": TAKE_SEAT, "args": {"name": name}}


def seat_batch(before: GameProjection, seat: int, name: str, *, seed: bytes, options: Mapping[str, Any]) -> list[Event]:
    """``name`` takes ``seat`` of the game as it is in ``before``; the setup follows when it was
    the last free seat."""
    events = [Event(SEAT_TAKEN, {"seat": seat, "name": name})]
    if before.free_seats == [seat]:
        rng = derive_rng(seed, before.game_id, before.version)
        events += before.engine.setup(dict(options), before.seats, rng)
    return events


# --- commands --------------------------------------------------------------------------------


def command_batch(
    before: GameProjection, seat: int, command: Command, *, seed: bytes, options: Mapping[str, Any]
) -> list[Event]:
    """What the engine decides of ``command`` from ``seat`` on top of ``before``, plus
    ``game.finished`` when it ends the game.

    Raises the engine's :class:`~games.base.RuleError` when the rules refuse the command, and
    :class:`EngineFault` when the engine answers with something no engine may answer."""
    engine = before.engine
    rng = derive_rng(seed, before.game_id, before.version)
    events = list(engine.decide(before.state, seat, command, rng))
    if not events:
        raise EngineFault(f"{before.game} decided no events for {command!r}")
    for event in events:
        if "." in event.type:
            raise EngineFault(f"{before.game} produced a service event type {event.type!r}")
    finished = finished_event(engine, fold(engine, events, before.state), seed=seed, options=options)
    return events if finished is None else [*events, finished]


def finished_event(engine: Engine, after: Any, *, seed: bytes, options: Mapping[str, Any]) -> Event | None:
    """``game.finished`` when the engine state ``after`` is terminal: the seed and the secret
    options revealed, the engine's summary; ``None`` while the game goes on."""
    if not engine.is_terminal(after):
        return None
    secret = seeds.split_options(engine, options)[1]
    return Event(FINISHED, seeds.finished_payload(seed, secret, engine.summary(after)))
