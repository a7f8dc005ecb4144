"""Playing whole games without the service (benchmarks, tests): folding events, the seat that owes
a command, a game played out by bots."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, TypeVar

from games.base.bots import Bot
from games.base.engine import Engine
from games.base.rng import Rng, derive_dealer
from games.base.values import Command, Event
from games.draw import seed_from_int

__all__ = ["fold", "owing_seat", "play_out", "play_steps"]

S = TypeVar("S")


def fold(engine: Engine[S], events: Sequence[Event], state: S | None = None) -> S:
    """Fold ``events`` into ``state`` (the engine's initial state when ``None``)."""
    folded = engine.initial_state() if state is None else state
    for event in events:
        folded = engine.evolve(folded, event)
    return folded


def owing_seat(engine: Engine[S], state: S, seats: int) -> int | None:
    """The lowest seat that owes a command (the engine's ``waiting_for``), as the service's bots
    pick it; ``None`` when the game is over or nobody owes anything."""
    return _owing_rule(engine, seats)(state)


def _owing_rule(engine: Engine[S], seats: int) -> Callable[[S], int | None]:
    """:func:`owing_seat` for one engine and seat count, with the engine's methods looked up once
    (a bench plays thousands of commands a second through it)."""
    is_terminal, waiting_for = engine.is_terminal, engine.waiting_for

    def owing(state: S) -> int | None:
        if is_terminal(state):
            return None
        owed = [seat for seat in waiting_for(state) if 0 <= seat < seats]
        return min(owed) if owed else None

    return owing


def play_steps(
    engine: Engine[S],
    seats: int,
    options: Mapping[str, Any],
    bots: Bot | Sequence[Bot],
    seed: bytes | int | Rng,
    *,
    max_commands: int = 100_000,
) -> Generator[tuple[S, int, Command], None, S]:
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
    engine: Engine[S],
    seats: int,
    options: Mapping[str, Any],
    bots: Bot | Sequence[Bot],
    seed: bytes | int | Rng,
    *,
    max_commands: int = 100_000,
) -> tuple[S, list[tuple[int, Command]]]:
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
