"""The contract every game engine keeps: a pure Decider.

A game engine is a plain object (usually a module-level instance of a small class) with the
surface below. The service drives it; the engine never does I/O, never reads a clock, never
touches asyncio or global mutable state. The same events always fold to the same state.

Data flow::

    setup(options, seats, rng)          -> [Event]        the game's first events
    evolve(state, event)                -> state          total, deterministic, never raises on
                                                          an event that decide/setup produced;
                                                          UnknownEvent naming any other type
    decide(state, seat, command, rng)   -> [Event]        or raises RuleError (stable code)
    legal_moves(state, seat)            -> [command]      every command decide accepts now
    waiting_for(state)                  -> [seat]         the seats the game waits on now
    view(state, viewer)                 -> dict           what that viewer may see, with "legal"
                                                          (optionally split in two, see
                                                          :class:`SplitViews`)
    redact(event, viewer)               -> Event | None   the event as that viewer may see it
    reveals(state, event)               -> bool           the event (folded on state) shows
                                                          something random or hidden (a draw,
                                                          a roll, a hidden card played)
    clock_seat(state)                   -> seat | None    whose turn it is while it alone owes (the
                                                          clock rule of games recorded before every
                                                          owing seat ran a clock)
    timeout_answer(state, seat)         -> command | None what answers for a seat whose time ran
                                                          out on a choice it may decline (None:
                                                          the game's on_timeout applies)
    cooperative(options)                -> bool           the seats win or lose together

Commands are plain dicts, exactly as clients send them: ``{"type": "...", "args": {...}}``.
Events are :class:`Event` values whose payloads hold only msgpack/JSON-safe data (str, int,
bool, None, lists and dicts with str keys), because they are stored and sent as they are.

Every engine checks a command in the same order, so the same bad command gets the same code from
every game (:func:`check_accepting` does the first two steps):

1. the game is over: ``game_over``, whatever was sent, even a malformed command;
2. the game has not started: ``illegal_move``;
3. the command's shape (:func:`parse_command`): ``bad_command``;
4. its type: ``unknown_command``;
5. the seat: ``not_your_turn`` (not a seat of the game, or not the one the game waits on);
6. its args (:func:`check_args`, with the game's table of the :class:`Arg` each command takes):
   ``bad_command`` naming an arg the command does not take, a missing one or one of the wrong
   kind; then the rules: ``bad_command`` for a value out of range, ``illegal_move`` for a move
   the rules refuse now.

``evolve`` keeps one contract too: an event type it does not know raises :class:`UnknownEvent`
naming it (a misspelt type from ``decide`` is a bug to catch, never an event to drop), and so does
each engine's fold of a stream of another game.

Randomness is owned by the service: it passes an :class:`Rng` derived from the game's secret
seed (a :class:`games.draw.Dealer`, the specified ``donjon-draw-2`` of ``docs/fairness.md``, for
new games; nothing in ``games/`` imports Python's ``random``). An engine deals each deck, pile or
bag once through ``rng.deal`` and reads its next item from the deal at the position the state's
counts give (the order is never written into the state or an event), and draws what the rules
make random per event (a die roll) from ``rng.stream(kind, n)``, ``n`` counting the earlier
events of that kind. When ``rng.deal`` answers ``None`` (``donjon-draw-1`` and the legacy scheme,
games recorded before dealing) it draws from the rng's own methods, exactly as those games did,
so that they replay. Every random outcome an engine draws must be written into the events it
returns, so that ``evolve`` never draws anything and replay re-rolls nothing.

Secret options (``Engine.secret_options``, such as a scripted ``tile_order``) are the future by
definition: no view and no redacted event may show them. An engine that has any records them in
its first event with :func:`secret_fields` (the value, a salted sha256 commitment and the salt)
and redacts that event with :func:`redact_secrets`, so every viewer sees the commitment and an
auditor who later learns the value and the salt can check it.

Bots: every game ships ``games/<game>/bots.py`` exposing ``BOTS: Mapping[str, Bot]``, its named
:class:`Bot` objects (the key is the bot's ``name``; the catalog lists the keys), and, when its
bots read facts of the engine they play on (The Castle's tile dataset), ``bots_for(engine) ->
Mapping[str, Bot]``, the same bots bound to an engine built from other data. The service seats
those bots and nothing else (:mod:`service.bots`).

Shared helpers for engines: :class:`EngineBase` builds the catalog entry and normalises options
from the class facts and the :class:`OptionSpec` table; :func:`parse_command` splits a command
into its type and args, :func:`check_args` checks the args against the game's :class:`Arg`
table, and :func:`str_arg` / :func:`int_arg` read one typed arg of it.

Playing whole games without the service (benchmarks, tests): :func:`owing_seat` is the seat that
owes a command, by the service's rule; :func:`play_steps` / :func:`play_out` play a game to its end
with one :class:`Bot` per seat.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Generator, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from games.draw import Dealer, DealMemo, Draw, DrawKey, derive_draw, seed_from_int
from games.records import fast_init

__all__ = [
    "SPECTATOR",
    "Event",
    "OptionSpec",
    "Rng",
    "Engine",
    "RuleError",
    "BadCommand",
    "UnknownCommand",
    "NotYourTurn",
    "IllegalMove",
    "GameOver",
    "UnknownEvent",
    "BadOptions",
    "Bot",
    "EngineBase",
    "SplitViews",
    "check_accepting",
    "check_seats",
    "command",
    "derive_dealer",
    "derive_rng",
    "fill_options",
    "fold",
    "int_arg",
    "owing_seat",
    "parse_command",
    "check_args",
    "Arg",
    "ArgKind",
    "play_out",
    "play_steps",
    "redact_secrets",
    "secret_digest",
    "secret_fields",
    "str_arg",
]

SPECTATOR = None
"""The viewer value for a spectator (anyone without a seat). Seats are ints from 0."""

Viewer = int | None
Command = dict[str, Any]
T = TypeVar("T")


class Rng(Protocol):
    """The random source engines and bots draw from, one shape for every scheme of
    ``docs/fairness.md``: :class:`games.draw.Dealer` (``donjon-draw-2``, new games),
    :class:`games.draw.Draw` (``donjon-draw-1``) or the service's legacy ``random.Random``.

    An engine draws a deck, pile or bag through :meth:`deal` and randomness the rules make per
    event (a die roll) through :meth:`stream`; when :meth:`deal` answers ``None`` (a scheme that
    draws per decision) it draws from this object's own methods, as games of that scheme did.
    Under ``donjon-draw-2`` those per-decision methods refuse (``PerDecisionDraw``): nothing is
    keyed by the stream version. A bot is handed a :meth:`stream` and uses its methods."""

    def deal(self, deck: str, number: int, contents: Sequence[T]) -> Sequence[T] | None:
        """The order the ``number``-th deal of ``deck`` (0: as it comes into play; 1: its first
        reshuffle ...) is drawn in, ``contents`` being that deal in canonical order
        (:func:`games.draw.canonical`); ``None`` under a scheme that draws per decision."""
        ...

    def stream(self, kind: str, number: int) -> Rng:
        """The source of the ``number``-th random event of ``kind`` (``"die"``) or of a bot's
        choice (``"bot:<seat>"``): a stream of its own under ``donjon-draw-2``, this object under
        the schemes that draw per decision."""
        ...

    def randrange(self, start: int, stop: int | None = None) -> int: ...

    def randint(self, low: int, high: int) -> int: ...

    def choice(self, items: Sequence[T]) -> T: ...

    def shuffle(self, items: MutableSequence[Any]) -> None: ...

    def sample(self, items: Sequence[T], k: int) -> list[T]: ...

    def secret_salt(self) -> str:
        """A salt as secret as the stream, drawn without consuming any of it."""
        ...


@fast_init  # one is made for every event folded
@dataclass(frozen=True, slots=True)
class Event:
    """One domain event as an engine produces it: a type tag and a msgpack-safe payload."""

    type: str
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One game option as the catalog shows it to clients, and the check of its value.

    ``kind`` is one of ``"bool"``, ``"int"``, ``"choice"``, ``"list"``; ``choices`` lists the
    allowed values of a ``"choice"`` option; ``minimum``/``maximum`` bound an ``"int"`` option;
    ``items`` says what a ``"list"`` option holds (``"tile ids"``), for messages and clients.
    A ``"list"`` option may also be ``None`` (its usual default: "not set").

    >>> OptionSpec("int", 6, "Score that wins.", minimum=1, maximum=20).check("target", 7)
    7
    >>> OptionSpec("choice", 4, "Points.", (4, 2)).check("points", True)
    Traceback (most recent call last):
    games.base.BadOptions: option 'points' must be one of [4, 2], got True
    """

    kind: str
    default: Any
    description: str
    choices: tuple[Any, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    items: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind, "default": self.default, "description": self.description}
        if self.choices:
            out["choices"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.items:
            out["items"] = self.items
        return out

    def _bounds(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f" from {self.minimum} to {self.maximum}"
        if self.minimum is not None:
            return f" of at least {self.minimum}"
        if self.maximum is not None:
            return f" of at most {self.maximum}"
        return ""

    def check(self, name: str, value: Any) -> Any:
        """``value`` if this option may take it (a list comes back as a list), else
        :class:`BadOptions` naming the option and quoting the value."""
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise BadOptions(f"option {name!r} must be true or false, got {value!r}")
        elif self.kind == "int":
            low = -float("inf") if self.minimum is None else self.minimum
            high = float("inf") if self.maximum is None else self.maximum
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise BadOptions(f"option {name!r} must be an integer{self._bounds()}, got {value!r}")
        elif self.kind == "choice":
            # ``True == 1``: compare types too, so a bool never passes for a number.
            if not any(type(c) is type(value) and c == value for c in self.choices):
                raise BadOptions(f"option {name!r} must be one of {list(self.choices)}, got {value!r}")
        elif self.kind == "list":
            if value is None:
                return None
            if not isinstance(value, (list, tuple)):
                raise BadOptions(f"option {name!r} must be a list of {self.items or 'values'}, got {value!r}")
            return list(value)
        return value


def command(type_: str, **args: Any) -> Command:
    """Build a command object the way a client sends it: ``command("pass")``."""
    return {"type": type_, "args": args}


_NO_ARGS: Mapping[str, Any] = {}


def parse_command(cmd: Any) -> tuple[str, dict[str, Any]]:
    """The type and a copy of the args of a client command; :class:`BadCommand` when it is not
    ``{"type": str, "args": {...}}`` (missing args mean no args; ``null`` is not an object).

    >>> parse_command({"type": "pass"})
    ('pass', {})
    """
    # ``dict`` first: an ABC check costs ten times more, and commands are dicts.
    if not isinstance(cmd, (dict, Mapping)) or not isinstance(cmd.get("type"), str):
        raise BadCommand(f"a command is {{'type': str, 'args': {{...}}}}, got {cmd!r}")
    args = cmd.get("args", _NO_ARGS)
    if not isinstance(args, (dict, Mapping)):
        raise BadCommand(f"args of {cmd['type']!r} must be an object (leave it out for none), got {args!r}")
    return cmd["type"], dict(args)


ArgKind = Literal["int", "str", "strs", "str|int"]
"""What an arg holds: an integer (never a bool), a string, a list of strings, or either of the
first two; spelled as the values are (mypy checks every table against it), like
:class:`OptionSpec`'s kinds."""


@dataclass(frozen=True, slots=True)
class Arg:
    """One argument a command takes: what it holds (``kind``) and whether it must be given. An
    optional arg may also be ``null``, which means not given."""

    kind: ArgKind
    required: bool = True

    def holds(self, value: Any) -> bool:
        """``value`` is of this arg's kind (``null`` passes for an optional arg)."""
        if value is None:
            return not self.required
        if self.kind == "strs":
            return isinstance(value, list) and all(isinstance(item, str) for item in value)
        return (isinstance(value, str) and "str" in self.kind) or (
            isinstance(value, int) and not isinstance(value, bool) and "int" in self.kind
        )


_KIND_WORDS: dict[ArgKind, str] = {
    "int": "an integer", "str": "a string", "strs": "a list of strings", "str|int": "a string or an integer"
}


def check_args(command_type: str, args: Mapping[str, Any], takes: Mapping[str, Arg]) -> None:
    """:class:`BadCommand` naming the first arg of ``args`` that ``takes`` does not list, the first
    required one missing, or the first of the wrong kind (a float, an object, a list where a
    string goes...); every game checks a command's args with this, once the seat may act.

    >>> check_args("place_tile", {"x": 0, "y": 1}, {"x": Arg("int"), "y": Arg("int")})
    >>> check_args("place_tile", {"x": 0.5, "y": 1}, {"x": Arg("int"), "y": Arg("int")})
    Traceback (most recent call last):
    games.base.BadCommand: place_tile needs an integer 'x', got 0.5
    >>> check_args("pass", {"x": 1}, {})
    Traceback (most recent call last):
    games.base.BadCommand: pass takes no arg 'x' (it takes none)
    """
    unknown = [name for name in args if name not in takes]
    if unknown:
        known = ", ".join(takes) or "none"
        raise BadCommand(f"{command_type} takes no arg {sorted(map(str, unknown))[0]!r} (it takes {known})")
    for name, arg in takes.items():
        value = args.get(name)
        if not arg.holds(value):
            wanted = f"needs {_KIND_WORDS[arg.kind]} {name!r}" if arg.required else (
                f"takes {_KIND_WORDS[arg.kind]} {name!r} or none")
            raise BadCommand(f"{command_type} {wanted}, got {value!r}")


def str_arg(args: Mapping[str, Any], name: str, command_type: str, default: str | None = None) -> str:
    """The string arg ``name`` of a ``command_type`` command (``default`` when it is missing and
    a default is given); :class:`BadCommand` quoting the input otherwise.

    >>> str_arg({"card": "tar#1"}, "card", "play_card")
    'tar#1'
    >>> str_arg({}, "card", "play_card")
    Traceback (most recent call last):
    games.base.BadCommand: play_card needs a string 'card', got None
    """
    value = args.get(name, default)
    if not isinstance(value, str):
        raise BadCommand(f"{command_type} needs a string {name!r}, got {value!r}")
    return value


def int_arg(args: Mapping[str, Any], name: str, command_type: str) -> int:
    """The integer arg ``name`` of a ``command_type`` command (a bool is not one);
    :class:`BadCommand` quoting the input otherwise.

    >>> int_arg({"x": -2}, "x", "place_tile")
    -2
    >>> int_arg({"x": True}, "x", "place_tile")
    Traceback (most recent call last):
    games.base.BadCommand: place_tile needs an integer 'x', got True
    """
    value = args.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadCommand(f"{command_type} needs an integer {name!r}, got {value!r}")
    return value


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


# --- the engine surface ---------------------------------------------------------------------


class Engine(Protocol):
    """What the service needs from a game. See the module docstring for the flow."""

    name: str
    """The game id used in the API (``"carcassonne"``)."""
    title: str
    min_seats: int
    max_seats: int
    options: Mapping[str, OptionSpec]
    secret_options: frozenset[str]
    """Options that must never reach a client (``{"tile_order"}``): not in the public
    ``game.created`` event, the lobby, a view or a redacted event. The engine keeps its part
    (see :func:`secret_fields`); the service keeps them out of what it publishes and folds them
    into the seed commitment. ``frozenset()`` when the game has none."""

    def catalog_entry(self) -> dict[str, Any]:
        """Id, title, seats, options (``OptionSpec.as_dict``), ``secret_options`` (sorted) and
        any notes (e.g. provisional data)."""
        ...

    def normalize_options(self, options: Mapping[str, Any], seats: int) -> dict[str, Any]:
        """Fill defaults and validate; raise :class:`BadOptions` naming the bad option."""
        ...

    def initial_state(self) -> Any:
        """The state before any event: the "not started" case."""
        ...

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        """The first events of a game with normalized options; all random outcomes inside."""
        ...

    def evolve(self, state: Any, event: Event) -> Any:
        """Apply one event. Must not mutate ``state``; returns the next state."""
        ...

    def decide(self, state: Any, seat: int, cmd: Command, rng: Rng) -> list[Event]:
        """Events for ``cmd`` by ``seat``, or raise a :class:`RuleError`. Must not mutate ``state``."""
        ...

    def legal_moves(self, state: Any, seat: int) -> list[Command]:
        """Every command ``decide`` would accept from ``seat`` now (empty when it owes nothing)."""
        ...

    def waiting_for(self, state: Any) -> list[int]:
        """The seats the game waits on now; each has legal moves. Another seat may have legal
        moves too without being waited on (a proposer may withdraw its trade offer). The service's
        bots and the benches find who plays from this, without listing every seat's moves."""
        ...

    def view(self, state: Any, viewer: Viewer) -> dict[str, Any]:
        """What ``viewer`` (a seat or ``SPECTATOR``) may see, JSON-safe, with a ``"legal"`` list."""
        ...

    def redact(self, event: Event, viewer: Viewer) -> Event | None:
        """The event as ``viewer`` may see it; ``None`` hides it entirely."""
        ...

    def is_terminal(self, state: Any) -> bool:
        ...

    def reveals(self, state: Any, event: Event) -> bool:
        """True when ``event``, folded on ``state``, makes known something random or hidden (a
        tile or card drawn, a die rolled, a hidden card shown to another seat): the service
        allows no undo across it."""
        ...

    def clock_seat(self, state: Any) -> int | None:
        """The seat whose turn it is, when it alone owes a command; ``None`` while the game waits
        on a choice out of turn or on nobody. The service runs the clock of every seat
        ``waiting_for`` names; this is the rule of games recorded before (``clock.runs`` absent),
        kept so that they fold to the clocks their players saw."""
        ...

    def timeout_answer(self, state: Any, seat: int) -> Command | None:
        """The command that answers for ``seat``, which owes a command now, when its time runs
        out on a choice it may decline at no cost (Castle Panic: a trade offer, declined), so
        that a timeout never makes a choice for it; ``None`` for anything else (a move of its
        turn, a discard or damage it must assign), where the game's ``on_timeout`` applies."""
        ...

    def cooperative(self, options: Mapping[str, Any]) -> bool:
        """True when the seats win or lose together: a seat that leaves is replaced by a bot,
        however many seats there are, instead of handing the game to the others."""
        ...

    def summary(self, state: Any) -> dict[str, Any]:
        """A short JSON-safe summary: status, scores, winners (used by replay and the lobby)."""
        ...


class SplitViews(Protocol):
    """An optional part of the :class:`Engine` surface, for a game whose view is mostly the same
    for every viewer: ``view(state, viewer)`` is exactly ``{**public_view(state),
    **private_view(state, viewer)}``, and the two never share a key. The service then builds the
    public part once per version, however many seats and spectators watch, and only the private
    part (``legal`` at least, and whatever else is the viewer's own) once per viewer. A game
    without these two methods has its whole ``view`` built once per viewer."""

    def public_view(self, state: Any) -> dict[str, Any]:
        """The fields of the view that are the same for every viewer (no ``legal``)."""
        ...

    def private_view(self, state: Any, viewer: Viewer) -> dict[str, Any]:
        """The fields that may differ between viewers, ``legal`` among them."""
        ...


class Bot(Protocol):
    """A named player of one game that the service can seat (see the module docstring).

    ``choose`` is pure: it reads ``state`` and draws only from ``rng``, never mutates either
    state or bot, and keeps nothing between calls, so the same state, seat and rng state give the
    same command (``donjon replay`` re-runs it to check every recorded bot move). It is called only
    for a seat that owes a command, and returns one of ``legal_moves(state, seat)`` as it is.
    """

    @property
    def name(self) -> str:
        """The bot's name in the catalog and in ``POST /games`` ``bots`` (``"greedy"``); read-only,
        so that a frozen bot (a dataclass) is a bot too."""
        ...

    def choose(self, state: Any, seat: int, rng: Rng) -> Command:
        """The command ``seat`` plays now: one of the engine's ``legal_moves(state, seat)``."""
        ...


class EngineBase:
    """The catalog entry and option normalisation of an engine, built from its class facts.

    Subclass, set ``name``, ``title``, ``min_seats``, ``max_seats``, ``options`` (the
    :class:`OptionSpec` table) and ``secret_options``, and override the hooks where the game
    needs more: :meth:`catalog_extras` (more catalog fields), :meth:`seat_range` (seats that
    depend on options) and :meth:`check_options` (rules that tie options together or look
    inside a list). ``notes`` are the catalog's notes; one is added per secret option.

    >>> class Race(EngineBase):
    ...     name, title, min_seats, max_seats = "race", "Race", 2, 4
    ...     options = {"target": OptionSpec("int", 6, "Score that wins.", minimum=1, maximum=20)}
    >>> Race().normalize_options({}, 3)
    {'target': 6}
    >>> Race().normalize_options({"goal": 3}, 3)
    Traceback (most recent call last):
    games.base.BadOptions: race has no option 'goal' (unknown option(s) ['goal']; options: target)
    """

    # Plain annotations, not ``ClassVar``: :class:`Engine` declares these as instance attributes, and
    # a class variable does not satisfy a protocol's instance variable.
    name: str
    title: str
    min_seats: int
    max_seats: int
    options: Mapping[str, OptionSpec] = {}
    secret_options: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()
    revealing: frozenset[str] = frozenset()
    """The event types that reveal something random or hidden (:meth:`reveals`)."""
    sealed_at_rest: Mapping[str, frozenset[str]] = {}
    """Event type -> payload fields the store keeps sealed although ``redact`` shows them to a
    spectator (``docs/fairness.md``, "Sealed at rest"). What ``redact`` hides is sealed anyway;
    this is for what a game shows spectators live but must not leave readable in the store."""

    def reveals(self, state: Any, event: Event) -> bool:
        """See :meth:`Engine.reveals`: the event's type is one of :attr:`revealing`."""
        return event.type in self.revealing

    def clock_seat(self, state: Any) -> int | None:
        """See :meth:`Engine.clock_seat`: the one seat ``waiting_for`` names, else ``None``."""
        waiting = self.waiting_for(state)  # type: ignore[attr-defined]
        return waiting[0] if len(waiting) == 1 else None

    def timeout_answer(self, state: Any, seat: int) -> Command | None:
        """See :meth:`Engine.timeout_answer`: nothing a game owes is declined by default."""
        return None

    def cooperative(self, options: Mapping[str, Any]) -> bool:
        """See :meth:`Engine.cooperative`: competitive unless the game says otherwise."""
        return False

    def catalog_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "id": self.name,
            "title": self.title,
            "min_seats": self.min_seats,
            "max_seats": self.max_seats,
            "options": {name: spec.as_dict() for name, spec in self.options.items()},
            "secret_options": sorted(self.secret_options),
        }
        notes = [*self.notes, *(f"Option {name} is secret: keep it out of anything sent to clients."
                                for name in sorted(self.secret_options))]
        if notes:
            entry["notes"] = notes
        entry.update(self.catalog_extras())
        return entry

    def catalog_extras(self) -> dict[str, Any]:
        """Game-specific catalog fields, merged into :meth:`catalog_entry`."""
        return {}

    def seat_range(self, options: Mapping[str, Any]) -> tuple[int, int]:
        """The seat counts allowed with these (filled, checked) options."""
        return self.min_seats, self.max_seats

    def check_options(self, options: dict[str, Any], seats: int) -> dict[str, Any]:
        """Checks beyond one option's kind; returns the options to use (may rewrite values)."""
        return options

    def normalize_options(self, options: Mapping[str, Any], seats: int) -> dict[str, Any]:
        """Fill defaults and validate; raise :class:`BadOptions` naming the bad option."""
        filled = fill_options(self.name, self.options, options)
        low, high = self.seat_range(filled)
        check_seats(self.name, seats, low, high, qualified=(low, high) != (self.min_seats, self.max_seats))
        return self.check_options(filled, seats)

    def public_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` without the secret ones: what a view or a public event may show."""
        return {name: value for name, value in options.items() if name not in self.secret_options}


def fill_options(game: str, specs: Mapping[str, OptionSpec], options: Mapping[str, Any]) -> dict[str, Any]:
    """Every option of ``specs`` in table order, with its default when not given, each checked
    by :meth:`OptionSpec.check`; :class:`BadOptions` for an unknown or bad one."""
    if not isinstance(options, Mapping):
        raise BadOptions(f"{game} options must be an object, got {options!r}")
    unknown = sorted(str(name) for name in options if name not in specs)
    if unknown:
        raise BadOptions(f"{game} has no option {unknown[0]!r} (unknown option(s) {unknown}; "
                         f"options: {', '.join(specs)})")
    return {name: spec.check(name, options.get(name, spec.default)) for name, spec in specs.items()}


def check_seats(game: str, seats: Any, low: int, high: int, *, qualified: bool = False) -> None:
    """:class:`BadOptions` unless ``low <= seats <= high``; ``qualified`` says the range
    depends on the options."""
    if isinstance(seats, bool) or not isinstance(seats, int) or not low <= seats <= high:
        if low == high:
            raise BadOptions(f"{game} is played by exactly {low} players, not {seats!r}")
        raise BadOptions(f"{game} takes {low} to {high} players{' with these options' if qualified else ''}, "
                         f"got {seats!r}")


# --- secret options -------------------------------------------------------------------------


SECRET_SALT = "secret_salt"
"""Payload key of the salt of every commitment in an event made by :func:`secret_fields`."""


def secret_digest(value: Any, salt: str) -> str | None:
    """The commitment to a secret option's value: sha256 of ``salt``, a colon and the value as
    compact JSON with sorted keys; ``None`` when the option is not set.

    The salt keeps a short value (a puzzle's five tiles) from being found by trying every
    possibility against the published digest.

    >>> secret_digest(["E", "U"], "ab") == hashlib.sha256(b'ab:["E","U"]').hexdigest()
    True
    """
    if value is None:
        return None
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(f"{salt}:{text}".encode()).hexdigest()


def secret_fields(secret: frozenset[str], options: Mapping[str, Any], rng: Rng) -> dict[str, Any]:
    """Payload fields recording the secret options of a game's first event: per option its
    value and ``<name>_sha256`` (:func:`secret_digest`), and the salt under
    :data:`SECRET_SALT` (``None`` when no secret is set).

    The salt is ``rng.secret_salt()``, made without drawing from it: a secret option changes no
    other random outcome, and the salt is as secret as the game's seed.
    """
    fields: dict[str, Any] = {name: options.get(name) for name in sorted(secret)}
    salt = None
    if any(value is not None for value in fields.values()):
        salt = rng.secret_salt()
    for name in sorted(secret):
        fields[f"{name}_sha256"] = secret_digest(fields[name], salt or "")
    fields[SECRET_SALT] = salt
    return fields


def redact_secrets(event: Event, secret: frozenset[str]) -> Event:
    """``event`` with the values of the secret options and their salt replaced by ``None``; the
    commitments stay. Events without secret fields come back as they are."""
    payload = event.payload
    hidden = [name for name in (*secret, SECRET_SALT) if payload.get(name) is not None]
    if not hidden:
        return event
    return Event(event.type, {**payload, **dict.fromkeys(hidden)})


def fold(engine: Engine, events: Sequence[Event], state: Any = None) -> Any:
    """Fold ``events`` into ``state`` (the engine's initial state when ``None``)."""
    if state is None:
        state = engine.initial_state()
    for event in events:
        state = engine.evolve(state, event)
    return state


def derive_dealer(seed: bytes | DrawKey, game_id: str, memo: DealMemo | None = None) -> Dealer:
    """The random source of every decision of the ``donjon-draw-2`` game ``game_id`` keyed by its
    game seed (:class:`games.draw.Dealer`; its deals remembered in ``memo``, or in its own)."""
    return Dealer(seed, game_id, memo)


def derive_rng(seed: bytes, game_id: str, version: int) -> Draw:
    """The random source of a ``donjon-draw-1`` game's command decided on top of stream
    ``version``: the stream of ``seed`` labelled ``game_id`` (:func:`games.draw.derive_draw`).

    Derived from the game's secret seed, so that anyone holding the revealed seed can re-run
    every decision and check that each random outcome in the log is the one the seed gives.
    """
    return derive_draw(seed, game_id, version)


# --- playing a whole game -------------------------------------------------------------------


def owing_seat(engine: Engine, state: Any, seats: int) -> int | None:
    """The lowest seat that owes a command (the engine's ``waiting_for``), as the service's bots
    pick it; ``None`` when the game is over or nobody owes anything."""
    return _owing_rule(engine, seats)(state)


def _owing_rule(engine: Engine, seats: int) -> Callable[[Any], int | None]:
    """:func:`owing_seat` for one engine and seat count, with the engine's methods looked up once
    (a bench plays thousands of commands a second through it)."""
    is_terminal, waiting_for = engine.is_terminal, engine.waiting_for

    def owing(state: Any) -> int | None:
        if is_terminal(state):
            return None
        owed = [seat for seat in waiting_for(state) if 0 <= seat < seats]
        return min(owed) if owed else None

    return owing


def play_steps(
    engine: Engine,
    seats: int,
    options: Mapping[str, Any],
    bots: Bot | Sequence[Bot],
    seed: bytes | int | Rng,
    *,
    max_commands: int = 100_000,
) -> Generator[tuple[Any, int, Command], None, Any]:
    """Play one game with ``bots`` (one per seat, or one for every seat); yield ``(state, seat,
    command)`` before each command is decided, and return the final state (``StopIteration.value``).

    The seat that plays is :func:`owing_seat`'s. ``options`` are normalised here. Randomness: an
    int names the ``donjon-draw-2`` game ``"bench"`` keyed by :func:`games.draw.seed_from_int`,
    bytes are its game seed: the :class:`games.draw.Dealer` of :func:`derive_dealer` deals every
    deck, and the bot of ``seat`` chooses from its stream ``bot:<seat>`` numbered by the engine
    events before the choice, as the service's are. A :class:`Rng` (a ``donjon-draw-1``
    :class:`games.draw.Draw`, a legacy generator) is the one source of setup, every decision and,
    through ``rng.stream``, every bot choice: one stream, drawn in that order. :class:`RuntimeError`
    when nobody owes a command before the end, or after ``max_commands`` commands.
    """
    players = [bots] * seats if hasattr(bots, "choose") else list(bots)
    if len(players) != seats:
        raise ValueError(f"{seats} seats need {seats} bots, got {len(players)}")
    choosers = [player.choose for player in players]
    if isinstance(seed, (bytes, int)):
        source: Rng = derive_dealer(seed_from_int(seed) if isinstance(seed, int) else seed, "bench")
    else:
        source = seed
    options = engine.normalize_options(options, seats)
    events = engine.setup(options, seats, source)
    state = fold(engine, events)
    engine_events = len(events)
    owing, decide, evolve, stream = _owing_rule(engine, seats), engine.decide, engine.evolve, source.stream
    for _ in range(max_commands):
        seat = owing(state)
        if seat is None:
            if engine.is_terminal(state):
                return state
            raise RuntimeError(f"{engine.name}: no seat owes a command in a game that is not over")
        cmd = choosers[seat](state, seat, stream(f"bot:{seat}", engine_events))
        yield state, seat, cmd
        events = decide(state, seat, cmd, source)
        for event in events:
            state = evolve(state, event)
        engine_events += len(events)
    if engine.is_terminal(state):
        return state
    raise RuntimeError(f"{engine.name}: the game did not end within {max_commands} commands")


def play_out(
    engine: Engine,
    seats: int,
    options: Mapping[str, Any],
    bots: Bot | Sequence[Bot],
    seed: bytes | int | Rng,
    *,
    max_commands: int = 100_000,
) -> tuple[Any, list[tuple[int, Command]]]:
    """Play one complete game (see :func:`play_steps`); the final state and the ``(seat,
    command)`` pairs played, in order. Pure: the same arguments give the same game.

    >>> from games.castle_panic import ENGINE
    >>> from games.castle_panic.bots import RANDOM
    >>> state, commands = play_out(ENGINE, 2, {}, RANDOM, b"doc")
    >>> ENGINE.is_terminal(state), play_out(ENGINE, 2, {}, RANDOM, b"doc")[1] == commands
    (True, True)
    """
    steps = play_steps(engine, seats, options, bots, seed, max_commands=max_commands)
    commands: list[tuple[int, Command]] = []
    while True:
        try:
            _, seat, cmd = next(steps)
        except StopIteration as done:
            return done.value, commands
        commands.append((seat, cmd))
