"""Hypothesis strategies for command args that are wrong: an arg the command does not take, a value
of the wrong kind (floats, objects, lists, booleans where a string or an integer goes), a required
arg left out. Used by the decide-path property test (tests/service/test_decisions.py) and the
websocket one (tests/service/test_command_args.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from games.base import Arg
from games.carcassonne.rules import ARGS as CARCASSONNE_ARGS
from games.castle.rules import ARGS as CASTLE_ARGS
from games.castle_panic.rules import ARGS as CASTLE_PANIC_ARGS

SERVICE_ARGS: dict[str, dict[str, Arg]] = {"resign": {}, "undo": {}}
"""The service's own commands take no args."""
COMMAND_ARGS: dict[str, dict[str, dict[str, Arg]]] = {
    name: {**table, **SERVICE_ARGS}
    for name, table in (("carcassonne", CARCASSONNE_ARGS), ("castle", CASTLE_ARGS), ("castle_panic", CASTLE_PANIC_ARGS))
}
"""Per game, every command a seat may send and the args it takes."""

LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.5, 2.0, -1.5, 1e300])
    | st.text(max_size=4)
)
JSON_VALUES = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
_PLAIN = {"int": 0, "str": "x", "strs": [], "str|int": "x"}


def plain_args(takes: Mapping[str, Arg]) -> dict[str, Any]:
    """Args of the right kinds for every required arg (the rules may still refuse the values)."""
    return {name: _PLAIN[arg.kind] for name, arg in takes.items() if arg.required}


@st.composite
def wrong_args(draw: st.DrawFn, takes: Mapping[str, Arg], base: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """``base`` (good args) with one to three things made wrong; the wrong args' names."""
    required = sorted(name for name, arg in takes.items() if arg.required)
    ways = ["unknown", *(["wrong"] if takes else []), *(["missing"] if required else [])]
    args, wrong = dict(base), set()
    for way in draw(st.lists(st.sampled_from(ways), min_size=1, max_size=3)):
        if way == "unknown":
            name = draw(st.text(min_size=1, max_size=8).filter(lambda key: key not in takes))
            args[name] = draw(JSON_VALUES)
        elif way == "wrong":
            name = draw(st.sampled_from(sorted(takes)))
            arg = takes[name]
            args[name] = draw(JSON_VALUES.filter(lambda value: not arg.holds(value)))  # noqa: B023 - drawn at once
        else:
            name = draw(st.sampled_from(required))
            args.pop(name, None)
        wrong.add(name)
    return args, wrong


def names_one_of(message: str, names: set[str]) -> bool:
    """The refusal's message quotes one of the wrong args, as ``check_args`` does."""
    return any(repr(name) in message for name in names)
