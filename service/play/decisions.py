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

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from events.chain import CHAIN
from games.base import (
    Command,
    Engine,
    Event,
    GameOver,
    IllegalMove,
    NotYourTurn,
    Rng,
    RuleError,
    check_args,
    fold,
    parse_command,
)
from games.draw import DEAL_VERSION
from projections.game import (
    CLOCK_EXPIRED,
    CREATED,
    FINISHED,
    LEGACY_DRAW,
    MOVE_UNDONE,
    REMATCH,
    SEAT_LEFT,
    SEAT_TAKEN,
    GameProjection,
)
from projections.lifecycle import BOT, RESIGN, UNDO, Features
from service.fairness import seeds
from service.fairness.draw_schemes import rng_for

__all__ = [
    "CREATE_GAME",
    "HIDDEN",
    "PUBLIC_COMMANDS",
    "TAKE_SEAT",
    "Batch",
    "EngineFault",
    "bot_seat_name",
    "command_batch",
    "command_decision",
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

HIDDEN = "donjon-hidden-1"
"""The sealing at rest of new games (``hidden`` in ``game.created``; :mod:`service.fairness.sealing`)."""
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
        return _folded(projection, self.events, first, self.expected_version, self.ts, self.actor, self.command)


def _folded(
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
        _Appended(expected_version + i + 1, event.type, event.payload, ts, actor, command if i == 0 else None, head)
        for i, event in enumerate(events[first:], first)
    )


@dataclass(slots=True)
class _Appended:
    """An event of a batch, shaped like an envelope for the projection."""

    version: int
    type: str
    payload: dict[str, Any]
    ts: int
    actor: int | None = None
    command: Command | None = None
    hash: str = ""
    """The chain head the fold keeps: the one before the batch (see :meth:`Batch.folded`)."""


def bot_seat_name(bot: str) -> str:
    """The display name of a seat a bot fills."""
    return f"{bot} bot"


# --- creation --------------------------------------------------------------------------------


def game_created(
    game: str,
    engine: Engine,
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
    seated = before.apply(_Appended(before.version + 1, SEAT_TAKEN, event.payload, 0))
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
        _refuse_args(command)
    if kind == RESIGN:
        return leave_batch(before, seat, "resigned", seed=seed, options=options, takeover=takeover)
    if kind == UNDO:
        return undo_batch(before, seat)
    return _engine_batch(before, seat, command, before.version, seed=seed, options=options)


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
    events = _engine_events(before, seat, command, before.version, seed=seed)
    after = _folded(before, events, 0, before.version, ts, seat, command)
    finished = finished_event(before.engine, after.state, seed=seed, options=options)
    if finished is not None:
        events = [*events, finished]
        after = _folded(after, events, len(events) - 1, before.version, ts, seat, command)
    return Batch(before.game_id, events, before.version, ts, seat, command, command_id, after)


def _engine_batch(
    before: GameProjection, seat: int, command: Command, version: int, *, seed: bytes, options: Mapping[str, Any]
) -> list[Event]:
    """The engine's events for ``command`` decided on top of ``version`` (+ ``game.finished``)."""
    events = _engine_events(before, seat, command, version, seed=seed)
    finished = finished_event(before.engine, fold(before.engine, events, before.state), seed=seed, options=options)
    return events if finished is None else [*events, finished]


def _engine_events(before: GameProjection, seat: int, command: Command, version: int, *, seed: bytes) -> list[Event]:
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


def finished_event(engine: Engine, after: Any, *, seed: bytes, options: Mapping[str, Any]) -> Event | None:
    """``game.finished`` when the engine state ``after`` is terminal: the seed and the secret
    options revealed, the engine's summary; ``None`` while the game goes on."""
    if not engine.is_terminal(after):
        return None
    secret = seeds.split_options(engine, options)[1]
    return Event(FINISHED, seeds.finished_payload(seed, secret, engine.summary(after)))


# --- the service's own commands: resign, undo; timeouts ------------------------------------

SERVICE_COMMANDS = frozenset({RESIGN, UNDO})
"""Command types the service decides itself, before any engine (no engine may use them)."""
CLOCK_TIMEOUT = "clock_timeout"
"""The ``command.type`` recorded on a timeout batch: ``{"seat": s, "move": <bot command>|None}``."""


def _refuse_args(command: Command) -> None:
    """``resign`` and ``undo`` take no args: ``{}`` or none at all, checked as every game checks
    its commands' args (:func:`games.base.check_args`)."""
    kind, args = parse_command(command)
    check_args(kind, args, {})


def takeover_bot(names: Sequence[str]) -> str | None:
    """The bot that takes a seat that left a game that goes on: the first, by name, of the
    game's bots that is not ``random`` (a seat should keep playing sensibly), else ``random``."""
    ordered = sorted(names)
    return next((name for name in ordered if name != "random"), ordered[0] if ordered else None)


def leave_ends_game(before: GameProjection, options: Mapping[str, Any]) -> bool:
    """A seat leaving ends a two-player game that is not cooperative; others go on with a bot."""
    return before.seats == 2 and not before.engine.cooperative(options)


def leave_batch(
    before: GameProjection,
    seat: int,
    reason: str,
    *,
    seed: bytes,
    options: Mapping[str, Any],
    takeover: str | None,
) -> list[Event]:
    """``seat.left`` for ``seat`` (``reason`` ``resigned`` or ``timeout``), then either the end
    (two-player games: the other seat wins by forfeit) or a bot in the seat."""
    if before.bots[seat] is not None or seat in before.left:
        raise NotYourTurn(f"seat {seat} is played by a bot now")
    if before.engine.is_terminal(before.state):
        raise GameOver("the game is over; no command is accepted")
    if leave_ends_game(before, options):
        left = Event(SEAT_LEFT, {"seat": seat, "reason": reason, "bot": None})
        winners = [other for other in range(before.seats) if other != seat]
        summary = dict(before.engine.summary(before.state), winners=winners, forfeit={"seat": seat, "reason": reason})
        secret = seeds.split_options(before.engine, options)[1]
        return [left, Event(FINISHED, seeds.finished_payload(seed, secret, summary))]
    if takeover is None:
        raise IllegalMove(f"{before.game} has no bot to take seat {seat}")
    return [Event(SEAT_LEFT, {"seat": seat, "reason": reason, "bot": takeover})]


def undo_refusal(before: GameProjection, seat: int) -> str | None:
    """Why ``seat`` may not undo now, or ``None`` when it may (the policy of docs/protocol.md)."""
    if not before.features.undo:
        return "undo is off in this game"
    if before.undo_owed(seat) is not None:
        return None
    if not before.checkpoints:
        return "nothing to undo: no command since the last draw, reveal or other seat's action"
    if before.checkpoints[-1].seat != seat:
        return "the last command is another seat's"
    return "the turn has passed: this seat is no longer to act"


def undo_batch(before: GameProjection, seat: int) -> list[Event]:
    """``move.undone`` naming the versions of ``seat``'s last undoable command batch."""
    why = undo_refusal(before, seat)
    if why is not None:
        raise RuleError(f"cannot undo: {why}", code="undo_refused")
    top = before.checkpoints[-1]
    return [Event(MOVE_UNDONE, {"seat": seat, "from": top.first, "to": top.last})]


def expired_seats(before: GameProjection, now: int) -> list[int]:
    """The human seats whose clocks have run out at ``now``, the first out first."""
    clock = before.clock
    if clock is None or not clock.running or before.status.value != "active":
        return []
    return [seat for seat in clock.out_of_time(now) if before.bots[seat] is None]


def expired_seat(before: GameProjection, now: int) -> int | None:
    """The human seat whose clock ran out first, if any has at ``now``: the one a timeout is for."""
    expired = expired_seats(before, now)
    return expired[0] if expired else None


def timeout_move(before: GameProjection, seat: int, bot_choice: Callable[[], Command] | None) -> Command | None:
    """The move a timeout of ``seat`` makes: the engine's ``timeout_answer`` when the seat owes an
    answer it may decline (a trade offer: declined), whatever ``on_timeout`` says; else, with
    ``on_timeout: "bot"``, the takeover bot's choice (``bot_choice()``; ``None`` when the game
    has no bot); else ``None``: the seat leaves (:func:`timeout_batch`)."""
    answer = before.engine.timeout_answer(before.state, seat)
    if answer is not None:
        return answer
    if before.features.on_timeout == BOT and bot_choice is not None:
        return bot_choice()
    return None


def timeout_command(seat: int, move: Command | None) -> Command:
    return {"type": CLOCK_TIMEOUT, "args": {"seat": seat, "move": move}}


def timeout_batch(
    before: GameProjection,
    seat: int,
    *,
    seed: bytes,
    options: Mapping[str, Any],
    move: Command | None,
    takeover: str | None,
) -> list[Event]:
    """``clock.expired`` for ``seat``, then the game's consequence in the same append: the
    timeout's ``move`` (:func:`timeout_move`: a declined offer, or the bot's move with
    ``on_timeout: "bot"``), decided on top of the version after ``clock.expired``; without one,
    :func:`leave_batch` (``reason`` ``timeout``)."""
    expired = Event(CLOCK_EXPIRED, {"seat": seat})
    if move is not None:
        return [expired, *_engine_batch(before, seat, move, before.version + 1, seed=seed, options=options)]
    if before.features.on_timeout == BOT:
        raise EngineFault(f"seat {seat} timed out with on_timeout 'bot' but no bot move")
    return [expired, *leave_batch(before, seat, "timeout", seed=seed, options=options, takeover=takeover)]


REMATCH_COMMAND = "rematch"
"""The ``command.type`` recorded on the append of ``game.rematch``: ``{"id": <rematch id>}``."""
PUBLIC_COMMANDS = frozenset({TAKE_SEAT, CREATE_GAME, REMATCH_COMMAND, RESIGN, UNDO})
"""The commands whose every argument the events of their batch publish (a name and a seed
contribution, the bot seats, the rematch's id; resign and undo take none): the store keeps
them in clear, and every other command sealed (:mod:`service.fairness.sealing`)."""


def rematch_command(rematch_id: str) -> Command:
    return {"type": REMATCH_COMMAND, "args": {"id": rematch_id}}


def rematch_batch(command: Command) -> list[Event]:
    """``game.rematch`` linking the finished game to the rematch its command names."""
    return [Event(REMATCH, {"id": command["args"]["id"]})]
