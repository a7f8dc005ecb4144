"""The contract every game engine keeps: a pure Decider.

A game engine is a plain object (usually a module-level instance of a small class) with the
surface below. The service drives it; the engine never does I/O, never reads a clock, never
touches asyncio or global mutable state. The same events always fold to the same state.

Data flow::

    setup(options, seats, rng)          -> [Event]        the game's first events
    evolve(state, event)                -> state          total, deterministic, never raises on
                                                          an event that decide/setup produced
    decide(state, seat, command, rng)   -> [Event]        or raises RuleError (stable code)
    legal_moves(state, seat)            -> [command]      every command decide accepts now
    view(state, viewer)                 -> dict           what that viewer may see, with "legal"
    redact(event, viewer)               -> Event | None   the event as that viewer may see it

Commands are plain dicts, exactly as clients send them: ``{"type": "...", "args": {...}}``.
Events are :class:`Event` values whose payloads hold only msgpack/JSON-safe data (str, int,
bool, None, lists and dicts with str keys), because they are stored and sent as they are.

Randomness is owned by the service: it passes a ``random.Random`` derived from the game's
secret seed and the stream version, and every random outcome an engine draws must be written
into the events it returns, so that ``evolve`` never draws anything and replay re-rolls nothing.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

__all__ = [
    "SPECTATOR",
    "Event",
    "OptionSpec",
    "Engine",
    "RuleError",
    "BadCommand",
    "UnknownCommand",
    "NotYourTurn",
    "IllegalMove",
    "GameOver",
    "BadOptions",
    "command",
    "derive_rng",
    "fold",
]

SPECTATOR = None
"""The viewer value for a spectator (anyone without a seat). Seats are ints from 0."""

Viewer = int | None
Command = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Event:
    """One domain event as an engine produces it: a type tag and a msgpack-safe payload."""

    type: str
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One game option as the catalog shows it to clients.

    ``kind`` is one of ``"bool"``, ``"int"``, ``"choice"``, ``"list"``; ``choices`` lists the
    allowed values of a ``"choice"`` option.
    """

    kind: str
    default: Any
    description: str
    choices: tuple[Any, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind, "default": self.default, "description": self.description}
        if self.choices:
            out["choices"] = list(self.choices)
        return out


def command(type_: str, **args: Any) -> Command:
    """Build a command object the way a client sends it: ``command("pass")``."""
    return {"type": type_, "args": args}


# --- rejections -----------------------------------------------------------------------------


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


# --- the engine surface ---------------------------------------------------------------------


class Engine(Protocol):
    """What the service needs from a game. See the module docstring for the flow."""

    name: str
    """The game id used in the API (``"carcassonne"``)."""
    title: str
    min_seats: int
    max_seats: int
    options: Mapping[str, OptionSpec]

    def catalog_entry(self) -> dict[str, Any]:
        """Id, title, seats, options (``OptionSpec.as_dict``) and any notes (e.g. provisional data)."""
        ...

    def normalize_options(self, options: Mapping[str, Any], seats: int) -> dict[str, Any]:
        """Fill defaults and validate; raise :class:`BadOptions` naming the bad option."""
        ...

    def initial_state(self) -> Any:
        """The state before any event: the "not started" case."""
        ...

    def setup(self, options: Mapping[str, Any], seats: int, rng: random.Random) -> list[Event]:
        """The first events of a game with normalized options; all random outcomes inside."""
        ...

    def evolve(self, state: Any, event: Event) -> Any:
        """Apply one event. Must not mutate ``state``; returns the next state."""
        ...

    def decide(self, state: Any, seat: int, cmd: Command, rng: random.Random) -> list[Event]:
        """Events for ``cmd`` by ``seat``, or raise a :class:`RuleError`. Must not mutate ``state``."""
        ...

    def legal_moves(self, state: Any, seat: int) -> list[Command]:
        """Every command ``decide`` would accept from ``seat`` now (empty when it owes nothing)."""
        ...

    def view(self, state: Any, viewer: Viewer) -> dict[str, Any]:
        """What ``viewer`` (a seat or ``SPECTATOR``) may see, JSON-safe, with a ``"legal"`` list."""
        ...

    def redact(self, event: Event, viewer: Viewer) -> Event | None:
        """The event as ``viewer`` may see it; ``None`` hides it entirely."""
        ...

    def is_terminal(self, state: Any) -> bool:
        ...

    def summary(self, state: Any) -> dict[str, Any]:
        """A short JSON-safe summary: status, scores, winners (used by replay and the lobby)."""
        ...


def fold(engine: Engine, events: Sequence[Event], state: Any = None) -> Any:
    """Fold ``events`` into ``state`` (the engine's initial state when ``None``)."""
    if state is None:
        state = engine.initial_state()
    for event in events:
        state = engine.evolve(state, event)
    return state


def derive_rng(seed: bytes, game_id: str, version: int) -> random.Random:
    """The random source for the command decided on top of stream ``version``.

    Derived from the game's secret seed, so that anyone holding the revealed seed can re-run
    every decision and check that each random outcome in the log is the one the seed gives.
    """
    digest = hashlib.sha256(seed + b"\x00" + game_id.encode() + b"\x00" + str(version).encode()).digest()
    return random.Random(int.from_bytes(digest, "big"))
