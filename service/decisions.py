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
:func:`decision_rng`, the stream of the game's draw scheme (``donjon-draw-1`` for new games,
:mod:`service.draw_schemes`) keyed by the game seed (:func:`service.seeds.game_seed` of the
server seed and every seat's contribution; the server seed itself in games recorded before
contributions) and labelled with the game id and ``v``. Setup is decided on top of the last
seat's version minus one, the version the seat batch (or, for a game of bots only, the last bot
seat) starts from.

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

from events.chain import CHAIN
from games.base import Command, Engine, Event, Rng, fold
from games.draw import DRAW_VERSION
from projections.game import CREATED, FINISHED, LEGACY_DRAW, SEAT_TAKEN, GameProjection
from service import seeds
from service.draw_schemes import rng_for

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
    "decision_rng",
    "drawing_seed",
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
    """``game.created``: the public part of the normalized ``options``, the commitment to the
    seed and the secret part (:mod:`service.seeds`), and the draw and chain algorithms."""
    public, secret = seeds.split_options(engine, options)
    commitment = seeds.commitment(seed, secret)
    return Event(
        CREATED,
        {
            "game": game,
            "options": public,
            "seats": seats,
            "seed_commitment": commitment,
            "draw": DRAW_VERSION,
            "chain": CHAIN,
        },
    )


def drawing_seed(projection: GameProjection, server_seed: bytes) -> bytes:
    """The key of every draw of the game: the game seed of the seats' contributions, or the
    server seed in a game recorded before them."""
    if projection.draw == LEGACY_DRAW:
        return server_seed
    return seeds.game_seed(server_seed, projection.contributions)


def decision_rng(projection: GameProjection, server_seed: bytes, label: str | None = None) -> Rng:
    """The random source of the decision taken on top of ``projection`` (its game id, or
    ``label``, e.g. a bot's)."""
    return rng_for(
        projection.draw, drawing_seed(projection, server_seed), label or projection.game_id, projection.version
    )


def _seat_event(
    before: GameProjection, seat: int, name: str, server_seed: bytes, *, bot: str | None = None,
    client_seed: str | None = None,
) -> Event:
    """``game.seat_taken``; in a game whose seed the seats share, with the seat's contribution
    (``client_seed``, else the server-made one)."""
    payload: dict[str, Any] = {"seat": seat, "name": name}
    if bot is not None:
        payload["bot"] = bot
    if before.draw != LEGACY_DRAW:
        if client_seed is None:
            payload["seed_contribution"] = seeds.server_contribution(server_seed, seat)
            payload["seed_contribution_from"] = "server"
        else:
            payload["seed_contribution"] = client_seed
            payload["seed_contribution_from"] = "seat"
    return Event(SEAT_TAKEN, payload)


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
    projection = GameProjection.empty(game_id, engine).apply(_Appended(1, CREATED, created.payload, 0))
    events, before_last = [created], projection
    for seat, name in sorted(bots.items()):
        before_last = projection
        event = _seat_event(projection, seat, bot_seat_name(name), seed, bot=name)
        projection = projection.apply(_Appended(projection.version + 1, SEAT_TAKEN, event.payload, 0))
        events.append(event)
    return [*events, *_setup(projection, seed, options, at=before_last)]


def _setup(seated: GameProjection, seed: bytes, options: Mapping[str, Any], *, at: GameProjection) -> list[Event]:
    """The engine's setup, once every seat of ``seated`` is taken, or nothing; drawn on top of
    ``at`` (the version before the last seat), with the key of every seat's contribution."""
    if seated.free_seats:
        return []
    rng = rng_for(seated.draw, drawing_seed(seated, seed), at.game_id, at.version)
    return seated.engine.setup(dict(options), seated.seats, rng)


# --- seats -----------------------------------------------------------------------------------


def seat_command(name: str, client_seed: str | None = None) -> Command:
    """The command recorded on a seat batch (with the seat's ``client_seed`` when it sent one)."""
    args: dict[str, Any] = {"name": name}
    if client_seed is not None:
        args["client_seed"] = client_seed
    return {"type": TAKE_SEAT, "args": args}


def seat_batch(
    before: GameProjection,
    seat: int,
    name: str,
    *,
    seed: bytes,
    options: Mapping[str, Any],
    client_seed: str | None = None,
) -> list[Event]:
    """``name`` takes ``seat`` of the game as it is in ``before`` (contributing ``client_seed``
    to the game's seed, or a server-made value); the setup follows when it was the last free seat."""
    event = _seat_event(before, seat, name, seed, client_seed=client_seed)
    seated = before.apply(_Appended(before.version + 1, SEAT_TAKEN, event.payload, 0))
    return [event, *_setup(seated, seed, options, at=before)]


# --- commands --------------------------------------------------------------------------------


def command_batch(
    before: GameProjection, seat: int, command: Command, *, seed: bytes, options: Mapping[str, Any]
) -> list[Event]:
    """What the engine decides of ``command`` from ``seat`` on top of ``before``, plus
    ``game.finished`` when it ends the game.

    Raises the engine's :class:`~games.base.RuleError` when the rules refuse the command, and
    :class:`EngineFault` when the engine answers with something no engine may answer."""
    engine = before.engine
    events = list(engine.decide(before.state, seat, command, decision_rng(before, seed)))
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
