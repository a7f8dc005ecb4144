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

Where each part lives (one module per job, each importing only those before it):
:mod:`~games.base.values` (events, commands, viewers), :mod:`~games.base.errors` (the refusals
and the first checks), :mod:`~games.base.rng` (the random source), :mod:`~games.base.options`,
:mod:`~games.base.commands` (a command's shape and args), :mod:`~games.base.secret` (secret
options), :mod:`~games.base.engine` (:class:`Engine`, :class:`SplitViews`, :class:`EngineBase`),
:mod:`~games.base.bots`, :mod:`~games.base.contract` (the registry's check of an engine) and
:mod:`~games.base.play` (whole games without the service). Callers import every name from here.
"""

from __future__ import annotations

from games.base.bots import Bot
from games.base.commands import Arg, ArgKind, check_args, command, int_arg, parse_command, str_arg
from games.base.contract import EngineRefused, check_engine
from games.base.engine import Engine, EngineBase, SplitViews
from games.base.errors import (
    BadCommand,
    BadOptions,
    GameOver,
    IllegalMove,
    NotYourTurn,
    RuleError,
    UnknownCommand,
    UnknownEvent,
    check_accepting,
)
from games.base.options import OptionSpec, check_seats, fill_options, public_options
from games.base.play import fold, owing_seat, play_out, play_steps
from games.base.rng import Rng, dealt_rest, derive_dealer, derive_rng
from games.base.secret import SECRET_SALT, redact_secrets, secret_digest, secret_fields
from games.base.values import SPECTATOR, Command, Event, Viewer

__all__ = [
    "SPECTATOR",
    "Command",
    "Viewer",
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
    "EngineRefused",
    "SplitViews",
    "SECRET_SALT",
    "check_accepting",
    "check_engine",
    "check_seats",
    "command",
    "dealt_rest",
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
    "public_options",
    "redact_secrets",
    "secret_digest",
    "secret_fields",
    "str_arg",
]

# Tracebacks, logs and doctests name these classes by the one path every caller imports them from.
for _public in (Event, OptionSpec, Arg, RuleError, BadCommand, UnknownCommand, NotYourTurn, IllegalMove,
                GameOver, BadOptions, UnknownEvent, EngineRefused):
    _public.__module__ = __name__
del _public
