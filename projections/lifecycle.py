"""The life of a game around its moves, folded: features, turn clocks, undo checkpoints.

Everything here is pure and folds from the envelopes alone: time is the envelopes' ``ts``
(never a clock read), so every node and every replay computes the same remaining times.

* :class:`Features`: what ``game.created`` records of ``POST /games``'s ``clock``,
  ``on_timeout``, ``undo`` and ``spectator_delay``, every time in whole milliseconds (games
  created before them fold to the defaults: no clock, undo on, no delay; games recorded in
  whole seconds fold to the same milliseconds, :func:`in_ms`).
* :class:`Clock`: each seat's remaining milliseconds as of ``since`` (the ``ts`` of the last
  event that moved the clock) and the seats whose clocks run: every human seat the game waits
  on (the engine's ``waiting_for``: its turn, or an answer it owes out of turn), several at once
  when several owe (:data:`OWING`); in games recorded before that rule, only the seat whose turn
  it is while it alone owes (the engine's ``clock_seat``, :data:`TURN`). Fischer clocks add the
  increment to a seat when its clock stops; per-move clocks start a seat at the full allowance
  each time its clock starts.
* :class:`Checkpoint`: the engine state before one undoable command batch of a seat, kept while
  that batch may still be undone (see :func:`undoable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games.records import fast_init

__all__ = [
    "BOT",
    "FORFEIT",
    "OWING",
    "RESIGN",
    "TURN",
    "UNDO",
    "Checkpoint",
    "Clock",
    "Features",
    "clock_started",
    "clock_to",
    "in_ms",
]

BOT = "bot"
FORFEIT = "forfeit"
UNDO = "undo"
RESIGN = "resign"
OWING = "owing"
"""``clock.runs`` of ``game.created``: every seat the game waits on runs its own clock."""
TURN = "turn"
"""The clock rule of games recorded without ``clock.runs``: only the seat whose turn it is runs
its clock, while it alone owes a command; an answer owed out of turn paused every clock."""
RUNS = "runs"


LEGACY_SECONDS = {
    "initial_s": "initial_ms", "increment_s": "increment_ms", "per_move_s": "per_move_ms", "seconds": "ms"
}
"""The keys of games recorded before times were kept in milliseconds (whole seconds then, since
the event codec takes no float), and the millisecond key each one folds to."""


def in_ms(recorded: dict[str, Any] | None) -> dict[str, int] | None:
    """A recorded ``clock`` or ``spectator_delay`` with every time in whole milliseconds: the
    keys of :data:`LEGACY_SECONDS` (whole seconds) become their ``_ms`` keys; others stay.

    >>> in_ms({"initial_s": 60, "increment_s": 5})
    {'initial_ms': 60000, 'increment_ms': 5000}
    >>> in_ms({"per_move_ms": 500})
    {'per_move_ms': 500}
    """
    if recorded is None:
        return None
    return {
        LEGACY_SECONDS.get(name, name): round(value * 1000) if name in LEGACY_SECONDS else int(value)
        for name, value in recorded.items()
    }


@dataclass(frozen=True, slots=True)
class Features:
    """The service features of one game, as ``game.created`` records them (times in whole
    milliseconds; ``POST /games`` takes seconds, :mod:`service.play.features`)."""

    clock: dict[str, int] | None = None
    """``{"initial_ms", "increment_ms"}`` or ``{"per_move_ms"}``; ``None``: no clock."""
    on_timeout: str = FORFEIT
    undo: bool = True
    spectator_delay: dict[str, int] | None = None
    """``{"versions": N}`` or ``{"ms": N}``; ``None``: spectators see the game live."""
    clock_runs: str = OWING
    """Whose clocks run: :data:`OWING` (``game.created``'s ``clock.runs``), or :data:`TURN` for
    a game recorded before, so that it folds to the clocks its players saw."""

    @classmethod
    def of_created(cls, payload: dict[str, Any]) -> Features:
        """The features ``game.created`` records; a game recorded in whole seconds
        (:data:`LEGACY_SECONDS`) folds to the same milliseconds it always meant, and one
        recorded without ``clock.runs`` by the :data:`TURN` rule it was played by."""
        clock = payload.get("clock")
        runs = OWING if clock is None else str(clock.get(RUNS, TURN))  # without a clock: no matter
        return cls(
            clock=None if clock is None else in_ms({name: value for name, value in clock.items() if name != RUNS}),
            on_timeout=payload.get("on_timeout") or FORFEIT,
            undo=payload.get("undo", True) is not False,
            spectator_delay=in_ms(payload.get("spectator_delay")),
            clock_runs=runs,
        )

    def as_payload(self) -> dict[str, Any]:
        """The fields ``game.created`` carries (``clock`` with ``runs``, when there is a clock)."""
        return {
            "clock": None if self.clock is None else {**self.clock, RUNS: self.clock_runs},
            "on_timeout": self.on_timeout,
            "undo": self.undo,
            "spectator_delay": self.spectator_delay,
        }

    @property
    def per_move_ms(self) -> int | None:
        if self.clock is None:
            return None
        return self.clock.get("per_move_ms")

    @property
    def initial_ms(self) -> int:
        assert self.clock is not None
        return self.clock["per_move_ms"] if "per_move_ms" in self.clock else self.clock["initial_ms"]

    @property
    def increment_ms(self) -> int:
        if self.clock is None:
            return 0
        return self.clock.get("increment_ms", 0)

    @property
    def delay_ms(self) -> int | None:
        """A ``{"ms": N}`` spectator delay's ``N``; ``None`` for none or a delay in versions."""
        return None if self.spectator_delay is None else self.spectator_delay.get("ms")


@fast_init
@dataclass(frozen=True, slots=True)
class Clock:
    """The turn clocks at ``since``: remaining ms per seat and the seats whose clocks run
    (in seat order; ``()``: paused)."""

    remaining: tuple[int, ...]
    running: tuple[int, ...]
    since: int

    def remaining_at(self, seat: int, now: int) -> int:
        """``seat``'s remaining ms at ``now`` (never below 0)."""
        left = self.remaining[seat]
        if seat in self.running:
            left -= max(0, now - self.since)
        return max(0, left)

    @property
    def first_out(self) -> int | None:
        """The running seat whose time runs out first (the lowest of those tied); ``None`` while
        paused."""
        if not self.running:
            return None
        remaining = self.remaining
        return min(self.running, key=lambda seat: (remaining[seat], seat))

    def out_of_time(self, now: int) -> list[int]:
        """The running seats whose time is out at ``now``, the first out first."""
        remaining = self.remaining
        late = [seat for seat in self.running if self.remaining_at(seat, now) <= 0]
        return sorted(late, key=lambda seat: (remaining[seat], seat))

    @property
    def deadline(self) -> int | None:
        """When the first running seat's time runs out (ms since the epoch); ``None`` while paused."""
        seat = self.first_out
        return None if seat is None else self.since + self.remaining[seat]

    def as_view(self) -> dict[str, Any]:
        """The ``clock`` field of every view: ``running`` is the seat that runs out first, at
        ``deadline``; ``running_seats`` every seat whose clock runs."""
        return {
            "remaining_ms": list(self.remaining),
            "running": self.first_out,
            "running_seats": list(self.running),
            "since": self.since,
            "deadline": self.deadline,
        }


def clock_started(features: Features, seats: int, ts: int) -> Clock:
    return Clock((features.initial_ms,) * seats, (), ts)


def clock_to(clock: Clock, features: Features, runners: tuple[int, ...], ts: int, *, over: bool = False) -> Clock:
    """The clock at ``ts`` with the clocks of ``runners`` (in seat order) running from then on:
    the elapsed time is charged to every seat that ran, a seat whose clock stops gets the
    increment, and a per-move clock starts each new runner at the full allowance. (Called after
    every event of a timed game: the usual case, the same seats running on, is answered first.)"""
    running, remaining = clock.running, clock.remaining
    changed = list(remaining)
    if runners == running:
        if clock.since == ts:
            return clock
        for seat in running:
            changed[seat] = clock.remaining_at(seat, ts)
        return Clock(tuple(changed), runners, ts)
    increment = 0 if over else features.increment_ms
    for seat in running:
        changed[seat] = clock.remaining_at(seat, ts) + (0 if seat in runners else increment)
    per_move = features.per_move_ms
    if per_move is not None:
        for seat in runners:
            if seat not in running:
                changed[seat] = per_move
    return Clock(tuple(changed), runners, ts)


@fast_init
@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One command batch of ``seat`` (versions ``first``..``last``) that may still be undone,
    and what the game was before it."""

    seat: int
    first: int
    last: int
    state: Any
    engine_events: int
