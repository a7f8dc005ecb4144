"""The engine surface the service drives (:class:`Engine`), its optional split views, and
:class:`EngineBase`, the catalog and options every game builds from its class facts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

from games.base.options import OptionSpec, check_seats, fill_options, public_options
from games.base.rng import Rng
from games.base.values import Command, Event, Viewer

__all__ = ["Engine", "EngineBase", "SplitViews"]

S = TypeVar("S")
"""A game's state type: each engine is an ``Engine[ItsState]``, so mypy checks that what its
``evolve`` returns is what its ``decide`` and ``view`` take."""
S_contra = TypeVar("S_contra", contravariant=True)
"""The state type of a protocol that only reads states (:class:`SplitViews`)."""


class Engine(Protocol[S]):
    """What the service needs from a game whose states are ``S`` (see :mod:`games.base` for the flow).

    The service, which serves every game, holds an ``Engine[Any]``; each game's engine is an
    ``Engine`` of its own state type (``CastlePanicEngine`` is an ``Engine[State]``)."""

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

    def initial_state(self) -> S:
        """The state before any event: the "not started" case."""
        ...

    def setup(self, options: Mapping[str, Any], seats: int, rng: Rng) -> list[Event]:
        """The first events of a game with normalized options; all random outcomes inside."""
        ...

    def evolve(self, state: S, event: Event) -> S:
        """Apply one event. Must not mutate ``state``; returns the next state."""
        ...

    def decide(self, state: S, seat: int, cmd: Command, rng: Rng) -> list[Event]:
        """Events for ``cmd`` by ``seat``, or raise a :class:`RuleError`. Must not mutate ``state``."""
        ...

    def legal_moves(self, state: S, seat: int) -> list[Command]:
        """Every command ``decide`` would accept from ``seat`` now (empty when it owes nothing)."""
        ...

    def waiting_for(self, state: S) -> list[int]:
        """The seats the game waits on now; each has legal moves. Another seat may have legal
        moves too without being waited on (a proposer may withdraw its trade offer). The service's
        bots and the benches find who plays from this, without listing every seat's moves."""
        ...

    def view(self, state: S, viewer: Viewer) -> dict[str, Any]:
        """What ``viewer`` (a seat or ``SPECTATOR``) may see, JSON-safe, with a ``"legal"`` list."""
        ...

    def redact(self, event: Event, viewer: Viewer) -> Event | None:
        """The event as ``viewer`` may see it; ``None`` hides it entirely."""
        ...

    def is_terminal(self, state: S) -> bool:
        ...

    def reveals(self, state: S, event: Event) -> bool:
        """True when ``event``, folded on ``state``, makes known something random or hidden (a
        tile or card drawn, a die rolled, a hidden card shown to another seat): the service
        allows no undo across it."""
        ...

    def clock_seat(self, state: S) -> int | None:
        """The seat whose turn it is, when it alone owes a command; ``None`` while the game waits
        on a choice out of turn or on nobody. The service runs the clock of every seat
        ``waiting_for`` names; this is the rule of games recorded before (``clock.runs`` absent),
        kept so that they fold to the clocks their players saw."""
        ...

    def timeout_answer(self, state: S, seat: int) -> Command | None:
        """The command that answers for ``seat``, which owes a command now, when its time runs
        out on a choice it may decline at no cost (Castle Panic: a trade offer, declined), so
        that a timeout never makes a choice for it; ``None`` for anything else (a move of its
        turn, a discard or damage it must assign), where the game's ``on_timeout`` applies."""
        ...

    def cooperative(self, options: Mapping[str, Any]) -> bool:
        """True when the seats win or lose together: a seat that leaves is replaced by a bot,
        however many seats there are, instead of handing the game to the others."""
        ...

    def summary(self, state: S) -> dict[str, Any]:
        """A short JSON-safe summary: status, scores, winners (used by replay and the lobby)."""
        ...


class SplitViews(Protocol[S_contra]):
    """An optional part of the :class:`Engine` surface, for a game whose view is mostly the same
    for every viewer: ``view(state, viewer)`` is exactly ``{**public_view(state),
    **private_view(state, viewer)}``, and the two never share a key. The service then builds the
    public part once per version, however many seats and spectators watch, and only the private
    part (``legal`` at least, and whatever else is the viewer's own) once per viewer. A game
    without these two methods has its whole ``view`` built once per viewer."""

    def public_view(self, state: S_contra) -> dict[str, Any]:
        """The fields of the view that are the same for every viewer (no ``legal``)."""
        ...

    def private_view(self, state: S_contra, viewer: Viewer) -> dict[str, Any]:
        """The fields that may differ between viewers, ``legal`` among them."""
        ...


class EngineBase(Generic[S]):
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

    def reveals(self, state: S, event: Event) -> bool:
        """See :meth:`Engine.reveals`: the event's type is one of :attr:`revealing`."""
        return event.type in self.revealing

    def clock_seat(self, state: S) -> int | None:
        """See :meth:`Engine.clock_seat`: the one seat ``waiting_for`` names, else ``None``."""
        waiting = self.waiting_for(state)  # type: ignore[attr-defined]
        return waiting[0] if len(waiting) == 1 else None

    def timeout_answer(self, state: S, seat: int) -> Command | None:
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
        return public_options(options, self.secret_options)
