"""``POST /games``'s service features, checked: ``clock``, ``on_timeout``, ``undo``, ``spectator_delay``.

Each bad value is refused with ``bad_options`` naming the field and quoting the value; what
passes becomes the :class:`projections.lifecycle.Features` that ``game.created`` records. Times
are given in seconds, fractions allowed (``0.5``), and recorded in whole milliseconds, rounded to
the nearest: the event codec takes no float, and a millisecond is what every clock reading is in.

>>> parse_features({"clock": {"per_move_s": 0.5}}, cooperative=False).clock
{'per_move_ms': 500}
>>> parse_features({}, cooperative=True).on_timeout
'bot'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from projections.lifecycle import BOT, FORFEIT, Features
from service.errors import ErrorCode, ServiceError

__all__ = ["FEATURE_FIELDS", "MAX_CLOCK_S", "parse_features"]

FEATURE_FIELDS = frozenset({"clock", "on_timeout", "undo", "spectator_delay"})
MAX_CLOCK_S = 7 * 24 * 3600
"""A week: the longest allowance, increment or delay in seconds (correspondence games)."""
MAX_DELAY_VERSIONS = 10_000
_CLOCK_SHAPES = (frozenset({"initial_s", "increment_s"}), frozenset({"initial_s"}), frozenset({"per_move_s"}))


def _refuse(message: str) -> ServiceError:
    return ServiceError(ErrorCode.BAD_OPTIONS, message)


def _ms(field: str, name: str, value: Any, *, zero: bool) -> int:
    """``value`` seconds (an int or a float) as whole milliseconds, rounded to the nearest."""
    low = 0 if zero else 0.1
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= MAX_CLOCK_S:
        raise _refuse(f"{field!r}: {name!r} must be a number of seconds from {low} to {MAX_CLOCK_S}, got {value!r}")
    return round(value * 1000)


def _clock(value: Any) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or frozenset(value) not in _CLOCK_SHAPES:
        raise _refuse(f"'clock' must be {{'initial_s': N, 'increment_s': M}} or {{'per_move_s': N}}, got {value!r}")
    if "per_move_s" in value:
        return {"per_move_ms": _ms("clock", "per_move_s", value["per_move_s"], zero=False)}
    return {
        "initial_ms": _ms("clock", "initial_s", value["initial_s"], zero=False),
        "increment_ms": _ms("clock", "increment_s", value.get("increment_s", 0), zero=True),
    }


def _delay(value: Any) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in ("versions", "seconds"):
        raise _refuse(f"'spectator_delay' must be {{'versions': N}} or {{'seconds': N}}, got {value!r}")
    (kind, amount), = value.items()
    if kind == "versions":
        if isinstance(amount, bool) or not isinstance(amount, int) or not 0 <= amount <= MAX_DELAY_VERSIONS:
            raise _refuse(
                f"'spectator_delay': 'versions' must be an integer from 0 to {MAX_DELAY_VERSIONS}, got {amount!r}"
            )
        return {"versions": amount}
    return {"ms": _ms("spectator_delay", "seconds", amount, zero=True)}


def parse_features(body: Mapping[str, Any], *, cooperative: bool) -> Features:
    """The features of ``body`` (absent fields: no clock, undo on, no delay; ``on_timeout``
    defaults to ``bot`` in cooperative games, where nobody can win a forfeit, else ``forfeit``)."""
    on_timeout = body.get("on_timeout")
    if on_timeout is None:
        on_timeout = BOT if cooperative else FORFEIT
    if on_timeout not in (BOT, FORFEIT):
        raise _refuse(f"'on_timeout' must be 'bot' or 'forfeit', got {on_timeout!r}")
    undo = body.get("undo", True)
    if not isinstance(undo, bool):
        raise _refuse(f"'undo' must be true or false, got {undo!r}")
    return Features(_clock(body.get("clock")), on_timeout, undo, _delay(body.get("spectator_delay")))


def catalog_features(cooperative: bool) -> dict[str, Any]:
    """The catalog's ``features``: the service features ``POST /games`` takes for a game, with
    their defaults (``cooperative``: the game's default options are cooperative)."""
    return {
        "clock": {
            "default": None,
            "description": "turn clocks: {'initial_s': N, 'increment_s': M} (Fischer) or {'per_move_s': N}; "
            "seconds, fractions allowed (kept to the millisecond)",
        },
        "on_timeout": {
            "choices": [BOT, FORFEIT],
            "default": BOT if cooperative else FORFEIT,
            "description": "when a seat's time runs out: a bot makes the move, or the seat forfeits",
        },
        "undo": {"default": True, "description": "a seat may undo its own last command while the policy allows"},
        "spectator_delay": {
            "default": None,
            "description": "spectators see the game {'versions': N} or {'seconds': N} behind until it ends "
            "(seconds: fractions allowed, kept to the millisecond)",
        },
    }
