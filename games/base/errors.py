"""The refusals of the rules (each with a stable code), and the first checks every engine makes."""

from __future__ import annotations

__all__ = ["RuleError", "BadCommand", "UnknownCommand", "NotYourTurn", "IllegalMove", "GameOver", "BadOptions",
           "UnknownEvent", "check_accepting"]


class RuleError(ValueError):
    """A command or setup the rules refuse. An expected outcome, not a bug.

    ``code`` is stable (clients switch on it, docs/protocol.md lists it); ``message`` is for
    humans and should quote the offending input.
    """

    code = "rule_violation"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0])


class BadCommand(RuleError):
    """The command is malformed: missing or wrongly typed args, values out of range."""

    code = "bad_command"


class UnknownCommand(RuleError):
    """The command type does not exist in this game."""

    code = "unknown_command"


class NotYourTurn(RuleError):
    """The seat may not act now (another seat's turn, or nothing is owed by this seat)."""

    code = "not_your_turn"


class IllegalMove(RuleError):
    """Well-formed and the seat may act, but the rules do not allow this move now."""

    code = "illegal_move"


class GameOver(RuleError):
    """The game has ended; no command is accepted."""

    code = "game_over"


class BadOptions(RuleError):
    """Game options or seat count that this game does not support."""

    code = "bad_options"


class UnknownEvent(ValueError):
    """``evolve`` was given an event type the engine does not know. A bug (or a stream of another
    game), never a rule outcome: not a :class:`RuleError`."""

    def __init__(self, game: str, event_type: str) -> None:
        super().__init__(f"{game} cannot fold unknown event type {event_type!r}")
        self.game, self.event_type = game, event_type


def check_accepting(*, started: bool, over: bool, why_over: str = "") -> None:
    """The first two checks every engine makes of a command (see the module docstring): a
    finished game refuses everything with ``game_over``, a game not started with ``illegal_move``."""
    if over:
        raise GameOver(f"the game is over{why_over}; no command is accepted")
    if not started:
        raise IllegalMove("the game has not started")
