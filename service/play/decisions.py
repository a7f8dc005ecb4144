"""The service's own decisions: what one append of the service holds, as a pure function of
what it is given (no I/O, no clock: the caller passes the time in).

Three kinds of batch come from here, and from nowhere else:

* the **creation batch**: ``game.created`` with the public options and the seed commitment,
  one ``game.seat_taken`` (with ``bot``) per bot seat, and the engine's setup when bots fill
  every seat; it records the command ``create_game`` when it seats bots;
* the **seat batch**: one ``game.seat_taken``, plus the setup when it takes the last seat;
  it records the command ``take_seat``;
* the **command batch**: what ``engine.decide`` makes of a command, plus ``game.finished``
  (the seed and secret options revealed) when those events end the game; the service's own
  commands ``resign`` (``seat.left``, and the forfeit's ``game.finished`` in a two-player game)
  and ``undo`` (``move.undone``);
* the **timeout batch**: ``clock.expired`` and its consequence (an offer declined, the bot's
  move, or the seat leaving: :func:`timeout_move`), decided by the clock keeper at a time it
  passes in;
* the **rematch link**: ``game.rematch`` after ``game.finished``.

Randomness follows the game's draw scheme (:mod:`service.fairness.draw_schemes`), keyed by the game seed
(:func:`service.fairness.seeds.game_seed` of the server seed and every seat's contribution; the server
seed itself in games recorded before contributions): :func:`decision_rng` is what the engine
decides with. Under ``donjon-draw-2`` (new games) it is the game's dealer, the same for every
decision: each deck is dealt once, and no draw depends on the stream version. Under the older
schemes it is the stream labelled with the game id and the version ``v`` the decision is taken on;
setup is decided on top of the last seat's version minus one, the version the seat batch (or, for
a game of bots only, the last bot seat) starts from.

The command path (:mod:`service.play.seating`, :mod:`service.play.commands`, the bot scheduler) builds
every append with these functions, and ``donjon replay`` (:mod:`service.fairness.replay`) re-runs them
on the recorded log, so the two cannot drift apart.

>>> creation_command({1: "greedy"})
{'type': 'create_game', 'args': {'bots': {'1': 'greedy'}}}
>>> creation_bots(creation_command({1: "greedy"}))
{1: 'greedy'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from events.chain import CHAIN
from games.base import Command, Engine, Event
from games.draw import DEAL_VERSION
from projections.game import CREATED, LEGACY_DRAW, SEAT_TAKEN, GameProjection
from projections.lifecycle import RESIGN, UNDO, Features
from service.fairness import seeds
from service.play.batches import (
    Appended,
    Batch,
    EngineFault,
    decision_rng,
    drawing_seed,
    engine_batch,
    engine_events,
    finished_event,
    fold_batch,
)
from service.play.own_commands import (
    CLOCK_TIMEOUT,
    REMATCH_COMMAND,
    SERVICE_COMMANDS,
    expired_seat,
    expired_seats,
    leave_batch,
    leave_ends_game,
    refuse_args,
    rematch_batch,
    rematch_command,
    takeover_bot,
    timeout_batch,
    timeout_command,
    timeout_move,
    undo_batch,
    undo_refusal,
)

__all__ = [
    "CREATE_GAME",
    "HIDDEN",
    "PUBLIC_COMMANDS",
    "TAKE_SEAT",
    "bot_seat_name",
    "command_batch",
    "command_decision",
    "creation_batch",
    "creation_bots",
    "creation_command",
    "game_created",
    "seat_batch",
    "seat_command",
    # the shared parts (service.play.batches) and the service's own commands
    # (service.play.own_commands), decided here too and named here for the command path and replay
    "Batch",
    "EngineFault",
    "decision_rng",
    "drawing_seed",
    "finished_event",
    "CLOCK_TIMEOUT",
    "REMATCH_COMMAND",
    "SERVICE_COMMANDS",
    "expired_seat",
    "expired_seats",
    "leave_batch",
    "leave_ends_game",
    "rematch_batch",
    "rematch_command",
    "takeover_bot",
    "timeout_batch",
    "timeout_command",
    "timeout_move",
    "undo_batch",
    "undo_refusal",
]

HIDDEN = "donjon-hidden-1"
"""The sealing at rest of new games (``hidden`` in ``game.created``; :mod:`service.fairness.sealing`)."""
TAKE_SEAT = "take_seat"
"""The ``command.type`` recorded on a seat batch, so replay and auditors see where batches begin."""
CREATE_GAME = "create_game"
"""The ``command.type`` recorded on a creation batch that seats bots: ``{"bots": {"1": "greedy"}}``."""


def bot_seat_name(bot: str) -> str:
    """The display name of a seat a bot fills."""
    return f"{bot} bot"


# --- creation --------------------------------------------------------------------------------


def game_created(
    game: str,
    engine: Engine[Any],
    options: Mapping[str, Any],
    seats: int,
    seed: bytes,
    features: Features | None = None,
    rematch_of: str | None = None,
    *,
    draw: str = DEAL_VERSION,
) -> Event:
    """``game.created``: the public part of the normalized ``options``, the commitment to the
    seed and the secret part (:mod:`service.fairness.seeds`), the draw, chain and sealing algorithms, the service
    features (clock, undo, spectator delay) and, for a rematch, the game it follows. ``draw`` is
    the scheme of new games; only tests name an older one (to record games as they were)."""
    public, secret = seeds.split_options(engine, options)
    commitment = seeds.commitment(seed, secret)
    payload: dict[str, Any] = {
        "game": game,
        "options": public,
        "seats": seats,
        "seed_commitment": commitment,
        "draw": draw,
        "chain": CHAIN,
        "hidden": HIDDEN,
    }
    payload.update((features or Features()).as_payload())
    if rematch_of is not None:
        payload["rematch_of"] = rematch_of
    return Event(CREATED, payload)


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
    engine: Engine[Any],
    created: Event,
    bots: Mapping[int, str],
    *,
    seed: bytes,
    game_id: str,
    options: Mapping[str, Any],
) -> list[Event]:
    """``created``, one seat per bot (in seat order), and the setup when the bots fill every seat."""
    projection = GameProjection.empty(game_id, engine).apply(Appended(1, CREATED, created.payload, 0))
    events, before_last = [created], projection
    for seat, name in sorted(bots.items()):
        before_last = projection
        event = _seat_event(projection, seat, bot_seat_name(name), seed, bot=name)
        projection = projection.apply(Appended(projection.version + 1, SEAT_TAKEN, event.payload, 0))
        events.append(event)
    return [*events, *_setup(projection, seed, options, at=before_last)]


def _setup(seated: GameProjection, seed: bytes, options: Mapping[str, Any], *, at: GameProjection) -> list[Event]:
    """The engine's setup, once every seat of ``seated`` is taken, or nothing; drawn on top of
    ``at`` (the version before the last seat), with the key of every seat's contribution."""
    if seated.free_seats:
        return []
    return seated.engine.setup(dict(options), seated.seats, decision_rng(seated, seed, version=at.version))


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
    seated = before.apply(Appended(before.version + 1, SEAT_TAKEN, event.payload, 0))
    return [event, *_setup(seated, seed, options, at=before)]


# --- commands --------------------------------------------------------------------------------


def command_batch(
    before: GameProjection,
    seat: int,
    command: Command,
    *,
    seed: bytes,
    options: Mapping[str, Any],
    takeover: str | None = None,
) -> list[Event]:
    """What the engine decides of ``command`` from ``seat`` on top of ``before``, plus
    ``game.finished`` when it ends the game; the service's own commands (``resign``, ``undo``:
    :data:`SERVICE_COMMANDS`) are decided here instead. ``takeover`` is the bot that takes a
    resigning seat of a game that goes on (:func:`takeover_bot`).

    Raises the engine's :class:`~games.base.RuleError` when the rules refuse the command, and
    :class:`EngineFault` when the engine answers with something no engine may answer."""
    kind = command.get("type") if isinstance(command, dict) else None
    if kind in SERVICE_COMMANDS:
        refuse_args(command)
    if kind == RESIGN:
        return leave_batch(before, seat, "resigned", seed=seed, options=options, takeover=takeover)
    if kind == UNDO:
        return undo_batch(before, seat)
    return engine_batch(before, seat, command, before.version, seed=seed, options=options)


def command_decision(
    before: GameProjection,
    seat: int,
    command: Command,
    *,
    seed: bytes,
    options: Mapping[str, Any],
    ts: int,
    command_id: str | None,
    takeover: str | None = None,
) -> Batch:
    """The batch to append for :func:`command_batch`'s events (decided by the same functions, so
    replay's re-run gives the same events), stamped with ``ts`` and ``command_id``. An engine
    command's batch carries the projection after it (:attr:`Batch.after`), folded once: the
    game's end is seen on that fold rather than on a fold of the engine state of its own."""
    kind = command.get("type") if isinstance(command, dict) else None
    if kind in SERVICE_COMMANDS:  # rare: the cache folds these when it commits them
        events = command_batch(before, seat, command, seed=seed, options=options, takeover=takeover)
        return Batch(before.game_id, events, before.version, ts, seat, command, command_id)
    events = engine_events(before, seat, command, before.version, seed=seed)
    after = fold_batch(before, events, 0, before.version, ts, seat, command)
    finished = finished_event(before.engine, after.state, seed=seed, options=options)
    if finished is not None:
        events = [*events, finished]
        after = fold_batch(after, events, len(events) - 1, before.version, ts, seat, command)
    return Batch(before.game_id, events, before.version, ts, seat, command, command_id, after)


PUBLIC_COMMANDS = frozenset({TAKE_SEAT, CREATE_GAME, REMATCH_COMMAND, RESIGN, UNDO})
"""The commands whose every argument the events of their batch publish (a name and a seed
contribution, the bot seats, the rematch's id; resign and undo take none): the store keeps
them in clear, and every other command sealed (:mod:`service.fairness.sealing`)."""


