"""The one table of stable error codes, and the exception that carries one to the edge.

Clients switch on ``code``; ``message`` is for humans. Every code here is listed with its
meaning in docs/protocol.md. An engine's :class:`games.base.RuleError` keeps its own code (the
base ones are in this table; an engine may add more, which pass through unchanged).
"""

from __future__ import annotations

import enum

from games.base import RuleError

__all__ = ["ErrorCode", "ServiceError", "from_rule_error"]


class ErrorCode(str, enum.Enum):
    """Every stable error code the service sends, with the HTTP status it maps to."""

    BAD_JSON = "bad_json"
    """The body or frame is not valid JSON (or msgpack on the ``donjon.msgpack`` subprotocol)."""
    BAD_FRAME = "bad_frame"
    """Decoded, but not an object of the expected shape (missing/mistyped fields)."""
    UNKNOWN_FRAME = "unknown_frame"
    """A frame ``type`` the protocol does not define."""
    HELLO_REQUIRED = "hello_required"
    """A ``command`` before a successful ``hello``."""
    BAD_REQUEST = "bad_request"
    """A malformed HTTP request: query parameter or body field missing or out of range."""
    UNKNOWN_COMMAND = "unknown_command"
    """The game has no command of that ``type``."""
    BAD_COMMAND = "bad_command"
    """The command's ``args`` are malformed."""
    NOT_YOUR_TURN = "not_your_turn"
    """The seat may not act now."""
    ILLEGAL_MOVE = "illegal_move"
    """Well-formed, the seat may act, but the rules refuse this move now."""
    GAME_OVER = "game_over"
    """The game is finished; nothing more is accepted."""
    NOT_STARTED = "not_started"
    """Seats are still open; commands are accepted once every seat is taken."""
    NOT_FINISHED = "not_finished"
    """The game has not finished; its full log (``GET /games/{id}/export``) is given only after the end."""
    GAME_PRUNED = "game_pruned"
    """The game was archived, then pruned (``donjon archive prune``): its events are served no
    more; the message names where its signed export went (``donjon verify`` checks that file)."""
    BAD_OPTIONS = "bad_options"
    """Options or seat count the game does not support."""
    UNKNOWN_GAME = "unknown_game"
    """``POST /games`` named a game this service does not serve."""
    GAME_FULL = "game_full"
    """Every seat of the game is taken."""
    UNAUTHORIZED = "unauthorized"
    """A token that is malformed, unknown, or for another game."""
    SPECTATOR = "spectator"
    """A spectator (no token) sent a command."""
    CONFLICT = "conflict"
    """The command's ``expected_version`` is not the game's version (or the game kept moving)."""
    FRAME_TOO_LARGE = "frame_too_large"
    """A frame or body above the size limit."""
    RATE_LIMITED = "rate_limited"
    """More frames than the per-connection rate limit allows."""
    STORE_UNAVAILABLE = "store_unavailable"
    """The event store cannot be reached now; retry later (the service recovers by itself)."""
    DRAINING = "draining"
    """The node is shutting down: it takes no new game, seat or socket; retry (another node
    answers behind a load balancer, or this one once restarted)."""
    ORIGIN_NOT_ALLOWED = "origin_not_allowed"
    """A browser page of an origin ``DONJON_CORS_ORIGINS`` does not allow (HTTP or websocket)."""
    NOT_FOUND = "not_found"
    """No game with that id (or no such route)."""
    UNDO_REFUSED = "undo_refused"
    """``undo`` when the policy refuses it (undo off, nothing undoable, another seat's command,
    something revealed since, or the turn passed); the message names the clause."""
    NOT_OVER = "not_over"
    """``POST /games/{id}/rematch`` before the game has ended."""
    CLOCK_EXPIRED = "clock_expired"
    """A command from a seat whose turn clock has run out (its ``clock.expired`` is on its way)."""
    INTERNAL = "internal"
    """A bug: logged with details on the server. A command may or may not have been appended:
    the client resends it with the same id, and a duplicate ``ack`` says it was."""

    @property
    def http_status(self) -> int:
        return _HTTP_STATUS.get(self, 400)


_HTTP_STATUS = {
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.SPECTATOR: 403,
    ErrorCode.ORIGIN_NOT_ALLOWED: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.GAME_PRUNED: 410,
    ErrorCode.GAME_FULL: 409,
    ErrorCode.CONFLICT: 409,
    ErrorCode.GAME_OVER: 409,
    ErrorCode.NOT_STARTED: 409,
    ErrorCode.NOT_FINISHED: 409,
    ErrorCode.NOT_YOUR_TURN: 409,
    ErrorCode.UNDO_REFUSED: 409,
    ErrorCode.CLOCK_EXPIRED: 409,
    ErrorCode.NOT_OVER: 409,
    ErrorCode.ILLEGAL_MOVE: 422,
    ErrorCode.FRAME_TOO_LARGE: 413,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.STORE_UNAVAILABLE: 503,
    ErrorCode.DRAINING: 503,
    ErrorCode.INTERNAL: 500,
}


class ServiceError(Exception):
    """An expected refusal: becomes an ``error`` frame or a JSON error body, never a crash."""

    def __init__(self, code: ErrorCode | str, message: str, *, http_status: int | None = None) -> None:
        super().__init__(message)
        self.code = code.value if isinstance(code, ErrorCode) else code
        if http_status is None:
            http_status = code.http_status if isinstance(code, ErrorCode) else 422
        self.http_status = http_status

    @property
    def message(self) -> str:
        return str(self.args[0])

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def from_rule_error(exc: RuleError) -> ServiceError:
    """An engine's refusal, code kept as the engine set it."""
    try:
        known = ErrorCode(exc.code)
    except ValueError:
        return ServiceError(exc.code, exc.message, http_status=422)
    return ServiceError(known, exc.message)
