"""Commands as clients send them: building one, splitting it, checking and reading its args."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from games.base.errors import BadCommand
from games.base.values import Command

__all__ = ["Arg", "ArgKind", "check_args", "command", "int_arg", "parse_command", "str_arg"]


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
