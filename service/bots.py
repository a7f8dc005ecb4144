"""Bots that fill seats: which bots each game offers, which bot seat owes a command, and the
random source of a bot's choice.

Every game ships ``games/<game>/bots.py``. The service reads its named bots, in this order:

1. ``engine.bots`` when the engine names its own (a mapping; the tests' tiny game does);
2. the module's ``bots_for(engine)``, when bots must be bound to the served engine (The Castle
   served from an operator's dataset);
3. the module's ``BOTS`` mapping of name -> bot;
4. else every public ``<name>_choose`` function of the module (Carcassonne's ``random_choose``
   and ``greedy_choose`` give the bots ``random`` and ``greedy``).

A bot is an object with ``choose(state, seat, rng) -> command`` or such a function; it returns
one of ``engine.legal_moves(state, seat)``.

A bot's choice on top of stream version ``v`` uses :func:`bot_rng`: ``derive_rng`` of the game's
seed with the game id suffixed ``:bot:<seat>`` (a suffix no game id can have, so it never equals
the rng of the engine's own decision on that version). It is therefore reproducible by anyone
holding the revealed seed, which is what ``donjon replay`` checks.

>>> from games import find_engine
>>> sorted(bots_for(find_engine("castle")))
['greedy', 'random']
"""

from __future__ import annotations

import importlib
import random
from types import ModuleType
from typing import Any, Callable, Mapping, Protocol

from games import GAME_MODULES
from games.base import Engine, derive_rng

__all__ = ["Bot", "bots_for", "bot_rng", "bot_command_id", "due_bot"]

Command = dict[str, Any]


class Bot(Protocol):
    def choose(self, state: Any, seat: int, rng: random.Random) -> Command: ...


class _FunctionBot:
    """A ``choose``-shaped function as a bot object."""

    __slots__ = ("choose",)

    def __init__(self, choose: Callable[[Any, int, random.Random], Command]) -> None:
        self.choose = choose


def _as_bot(value: Any) -> Bot:
    if callable(getattr(value, "choose", None)):
        return value
    if callable(value):
        return _FunctionBot(value)
    raise TypeError(f"a bot is an object with choose(state, seat, rng) or such a function, not {value!r}")


def _bots_module(engine: Engine) -> ModuleType | None:
    package = GAME_MODULES.get(getattr(engine, "name", ""))
    if package is None:
        return None
    try:
        return importlib.import_module(f"{package}.bots")
    except ImportError:
        return None


def bots_for(engine: Engine) -> dict[str, Bot]:
    """The bots ``engine``'s game offers, by name (empty when it offers none)."""
    own = getattr(engine, "bots", None)
    if isinstance(own, Mapping):
        return {str(name): _as_bot(bot) for name, bot in own.items()}
    module = _bots_module(engine)
    if module is None:
        return {}
    bind = getattr(module, "bots_for", None)
    if callable(bind):
        return {str(name): _as_bot(bot) for name, bot in bind(engine).items()}
    registry = getattr(module, "BOTS", None)
    if isinstance(registry, Mapping):
        return {str(name): _as_bot(bot) for name, bot in registry.items()}
    public = getattr(module, "__all__", None) or [name for name in vars(module) if not name.startswith("_")]
    found = {}
    for name in public:
        value = getattr(module, name, None)
        if name.endswith("_choose") and callable(value):
            found[name[: -len("_choose")]] = _FunctionBot(value)
    return found


def bot_rng(seed: bytes, game_id: str, seat: int, version: int) -> random.Random:
    """The random source of the bot in ``seat`` choosing on top of ``version``."""
    return derive_rng(seed, f"{game_id}:bot:{seat}", version)


def bot_command_id(seat: int, version: int) -> str:
    """The command id of the bot move of ``seat`` decided on top of ``version``: the same on every
    node, so the store applies a bot move at most once however many nodes race to make it."""
    return f"bot:{seat}:{version}"


def due_bot(engine: Engine, state: Any, bots: tuple[str | None, ...]) -> tuple[int, str] | None:
    """The lowest bot seat that owes a command, with its bot's name; ``None`` when no bot does."""
    if not any(bots) or engine.is_terminal(state):
        return None
    waiting = getattr(engine, "waiting_for", None)
    if callable(waiting):
        owing = set(waiting(state))
        candidates = [seat for seat, name in enumerate(bots) if name is not None and seat in owing]
    else:
        candidates = [seat for seat, name in enumerate(bots) if name is not None and engine.legal_moves(state, seat)]
    if not candidates:
        return None
    seat = candidates[0]
    return seat, bots[seat]  # type: ignore[return-value]
