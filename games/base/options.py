"""Game options: the catalog's description of each, and their check."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from games.base.errors import BadOptions

__all__ = ["OptionSpec", "check_seats", "fill_options", "public_options"]


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One game option as the catalog shows it to clients, and the check of its value.

    ``kind`` is one of ``"bool"``, ``"int"``, ``"choice"``, ``"list"``; ``choices`` lists the
    allowed values of a ``"choice"`` option; ``minimum``/``maximum`` bound an ``"int"`` option;
    ``items`` says what a ``"list"`` option holds (``"tile ids"``), for messages and clients.
    ``label`` is the option's name for people (a form's label), where the key is for programs.
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
    label: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind, "default": self.default, "description": self.description}
        if self.label:
            out["label"] = self.label
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


def public_options(options: Mapping[str, Any], secret: frozenset[str]) -> dict[str, Any]:
    """``options`` without the ``secret`` ones: what a view or a public event may show."""
    return {name: value for name, value in options.items() if name not in secret}
