"""Fast copies of the frozen, slotted dataclasses that engine states (and projections) are made of.

``dataclasses.replace`` checks its arguments, builds a dict of every field and calls
``__init__``, which sets each field through ``object.__setattr__``; in a fold that copies a
state for every event, that is most of the time spent. :func:`copyable` gives a record class a
generated ``but(**changes)`` instead: one keyword per field, each slot set straight through its
member descriptor. The copy is as frozen as the original. It is only for plain records: no
``__post_init__`` (it would not run) and no ``InitVar``.

>>> from dataclasses import dataclass
>>> @copyable
... @dataclass(frozen=True, slots=True)
... class Point(Record):
...     x: int
...     y: int = 0
>>> Point(1, 2).but(y=5)
Point(x=1, y=5)
>>> Point(1).but(z=3)
Traceback (most recent call last):
    ...
TypeError: Point.but() got an unexpected keyword argument 'z'
"""

from __future__ import annotations

import dataclasses
from typing import Any, Self, TypeVar

__all__ = ["Record", "copyable"]

R = TypeVar("R", bound="Record")


class Record:
    """A base for record classes made :func:`copyable` (it holds no slot of its own)."""

    __slots__ = ()

    def but(self, **changes: Any) -> Self:
        """A copy with ``changes`` (replaced on each class by :func:`copyable`)."""
        raise NotImplementedError(f"{type(self).__name__} is not decorated with @copyable")


def copyable(cls: type[R]) -> type[R]:
    """Give the frozen, slotted dataclass ``cls`` a generated ``but``; returns ``cls``."""
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    if getattr(cls, "__post_init__", None) is not None or set(names) != set(cls.__slots__):
        raise TypeError(f"{cls.__name__}: @copyable is for slotted records without __post_init__")
    scope: dict[str, Any] = {"_KEEP": object(), "_new": object.__new__, "_cls": cls}
    scope.update((f"_set_{name}", cls.__dict__[name].__set__) for name in names)
    params = ", ".join(f"{name}=_KEEP" for name in names)
    body = "".join(f"    _set_{name}(new, self.{name} if {name} is _KEEP else {name})\n" for name in names)
    source = f"def but(self, *, {params}):\n    new = _new(_cls)\n{body}    return new\n"
    exec(source, scope)  # generated from the dataclass's own field names, nothing from outside
    but = scope["but"]
    but.__doc__ = f"A copy of this {cls.__name__} with the fields given changed (``dataclasses.replace``, fast)."
    but.__qualname__ = f"{cls.__qualname__}.but"
    cls.but = but  # type: ignore[method-assign]
    return cls
