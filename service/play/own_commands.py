"""The service's own decisions beside the engine's: a seat leaving (``resign``, a timeout), ``undo``,
a turn clock running out, and the rematch link. Pure, as :mod:`service.play.decisions`, which
decides ``resign`` and ``undo`` through these and re-exports them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from games.base import Command, Event, GameOver, IllegalMove, NotYourTurn, RuleError, check_args, parse_command
from projections.game import CLOCK_EXPIRED, FINISHED, MOVE_UNDONE, REMATCH, SEAT_LEFT, GameProjection
from projections.lifecycle import BOT, RESIGN, UNDO
from service.fairness import seeds
from service.play.batches import EngineFault, engine_batch

__all__ = [
    "CLOCK_TIMEOUT",
    "REMATCH_COMMAND",
    "SERVICE_COMMANDS",
    "expired_seat",
    "expired_seats",
    "leave_batch",
    "leave_ends_game",
    "refuse_args",
    "rematch_batch",
    "rematch_command",
    "takeover_bot",
    "timeout_batch",
    "timeout_command",
    "timeout_move",
    "undo_batch",
    "undo_refusal",
]

# --- the service's own commands: resign, undo; timeouts ------------------------------------

SERVICE_COMMANDS = frozenset({RESIGN, UNDO})
"""Command types the service decides itself, before any engine (no engine may use them)."""
CLOCK_TIMEOUT = "clock_timeout"
"""The ``command.type`` recorded on a timeout batch: ``{"seat": s, "move": <bot command>|None}``."""


def refuse_args(command: Command) -> None:
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
        return [expired, *engine_batch(before, seat, move, before.version + 1, seed=seed, options=options)]
    if before.features.on_timeout == BOT:
        raise EngineFault(f"seat {seat} timed out with on_timeout 'bot' but no bot move")
    return [expired, *leave_batch(before, seat, "timeout", seed=seed, options=options, takeover=takeover)]


REMATCH_COMMAND = "rematch"
"""The ``command.type`` recorded on the append of ``game.rematch``: ``{"id": <rematch id>}``."""

def rematch_command(rematch_id: str) -> Command:
    return {"type": REMATCH_COMMAND, "args": {"id": rematch_id}}


def rematch_batch(command: Command) -> list[Event]:
    """``game.rematch`` linking the finished game to the rematch its command names."""
    return [Event(REMATCH, {"id": command["args"]["id"]})]
