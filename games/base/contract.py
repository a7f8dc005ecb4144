"""The registry's check of an engine when its game is loaded: every hook of :class:`Engine` is
there and of the right kind, so that a game package with a hook missing or misspelt is refused at
start with a message naming the game and the hook, not answered with a 500 at its first request.

>>> class Half:
...     name, title, min_seats, max_seats = "half", "Half", 2, 2
>>> check_engine("half", Half())
Traceback (most recent call last):
games.base.EngineRefused: game 'half': hook 'options' is missing (an Engine has options: Mapping[str, OptionSpec])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from games.base.engine import Engine
from games.base.options import OptionSpec

__all__ = ["ATTRIBUTES", "HOOKS", "SPLIT_HOOKS", "EngineRefused", "check_engine"]


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _is_options(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(name, str) and isinstance(spec, OptionSpec) for name, spec in value.items())


def _is_names(value: Any) -> bool:
    return isinstance(value, frozenset) and all(isinstance(name, str) for name in value)


ATTRIBUTES: Mapping[str, tuple[str, Callable[[Any], bool]]] = {
    "name": ("str", lambda value: isinstance(value, str) and bool(value)),
    "title": ("str", lambda value: isinstance(value, str) and bool(value)),
    "min_seats": ("int", _is_count),
    "max_seats": ("int", _is_count),
    "options": ("Mapping[str, OptionSpec]", _is_options),
    "secret_options": ("frozenset[str]", _is_names),
}
"""The data attributes of :class:`Engine`: the type the message names, and the check of a value."""

HOOKS: Mapping[str, int] = {
    "catalog_entry": 0,
    "normalize_options": 2,
    "initial_state": 0,
    "setup": 3,
    "evolve": 2,
    "decide": 4,
    "legal_moves": 2,
    "waiting_for": 1,
    "view": 2,
    "redact": 2,
    "is_terminal": 1,
    "reveals": 2,
    "clock_seat": 1,
    "timeout_answer": 2,
    "cooperative": 1,
    "summary": 1,
}
"""The methods of :class:`Engine` and how many arguments each is called with (``self`` aside)."""


SPLIT_HOOKS: Mapping[str, int] = {"public_view": 1, "private_view": 2}
"""The optional pair of :class:`~games.base.engine.SplitViews`: an engine has both or neither."""


class EngineRefused(TypeError):
    """A game package whose engine does not keep the :class:`Engine` contract: a bug of that
    package, found when the registry loads it."""

    def __init__(self, game: str, hook: str, problem: str) -> None:
        super().__init__(f"game {game!r}: hook {hook!r} {problem}")
        self.game, self.hook = game, hook


def _takes(hook: Callable[..., Any], count: int) -> bool:
    """``hook`` can be called with ``count`` positional arguments (a signature it does not show,
    as some builtins, passes)."""
    try:
        signature = inspect.signature(hook)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(*range(count))
    except TypeError:
        return False
    return True


def check_engine(game: str, engine: Any) -> Engine[Any]:
    """``engine`` as the :class:`Engine` of game id ``game``, once every attribute and hook of the
    contract is checked; :class:`EngineRefused` naming the game and the first hook missing, of the
    wrong type or with the wrong arguments, or a ``name`` other than ``game``."""
    for attribute, (kind, holds) in ATTRIBUTES.items():
        if not hasattr(engine, attribute):
            raise EngineRefused(game, attribute, f"is missing (an Engine has {attribute}: {kind})")
        value = getattr(engine, attribute)
        if not holds(value):
            raise EngineRefused(game, attribute, f"must be a {kind}, got {value!r}")
    if engine.name != game:
        raise EngineRefused(game, "name", f"must be the game id {game!r} it is registered under, got {engine.name!r}")
    if engine.min_seats > engine.max_seats:
        raise EngineRefused(game, "min_seats", f"{engine.min_seats} is above max_seats {engine.max_seats}")
    for hook, count in HOOKS.items():
        method = getattr(engine, hook, None)
        if method is None:
            raise EngineRefused(game, hook, f"is missing (an Engine has {hook}() taking {count} argument(s))")
        if not callable(method):
            raise EngineRefused(game, hook, f"must be a method, got {method!r}")
        if not _takes(method, count):
            raise EngineRefused(game, hook, f"must take {count} argument(s), has {inspect.signature(method)}")
    split = [hook for hook in SPLIT_HOOKS if getattr(engine, hook, None) is not None]
    if split and len(split) < len(SPLIT_HOOKS):
        missing = next(hook for hook in SPLIT_HOOKS if hook not in split)
        raise EngineRefused(game, missing, f"is missing: an engine with {split[0]}() splits its views and needs both "
                                           f"of {' and '.join(SPLIT_HOOKS)}")
    for hook in split:
        if not callable(getattr(engine, hook)) or not _takes(getattr(engine, hook), SPLIT_HOOKS[hook]):
            raise EngineRefused(game, hook, f"must be a method taking {SPLIT_HOOKS[hook]} argument(s)")
    checked: Engine[Any] = engine
    return checked
