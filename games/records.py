"""Fast copies and constructors of the frozen, slotted dataclasses that engine states (and
projections) are made of.

``dataclasses.replace`` checks its arguments, builds a dict of every field and calls
``__init__``, which sets each field through ``object.__setattr__``; in a fold that copies a
state for every event, that is most of the time spent. :func:`copyable` gives a record class a
generated ``but(**changes)`` instead: one keyword per field, each slot set straight through its
member descriptor (or, for a record without slots, one merged ``__dict__`` given whole). The
copy is as frozen as the original. :func:`fast_init` replaces the
dataclass's ``__init__`` with one generated the same way (same parameters, defaults and
default factories; about half the cost), for records made anew in a fold. Both are only for
plain records: no ``__post_init__`` (it would not run), no ``InitVar``, no ``init=False`` or
keyword-only field. The dataclass's ``__eq__``, ``__repr__`` and frozenness stay as they are.

>>> from dataclasses import dataclass, field
>>> @fast_init
... @copyable
... @dataclass(frozen=True, slots=True)
... class Point(Record):
...     x: int
...     y: int = 0
...     tags: tuple[str, ...] = field(default_factory=tuple)
>>> Point(1, 2).but(y=5)
Point(x=1, y=5, tags=())
>>> Point(1).but(z=3)
Traceback (most recent call last):
    ...
TypeError: Point.but() got an unexpected keyword argument 'z'
>>> Point(1, tags=("a",)) == Point(x=1, y=0, tags=("a",))
True
>>> Point(1).x = 2
Traceback (most recent call last):
    ...
dataclasses.FrozenInstanceError: cannot assign to field 'x'
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Self, TypeVar

__all__ = ["Record", "copyable", "fast_init"]

R = TypeVar("R", bound="Record")
T = TypeVar("T")

_SELF = "__record__"
"""The generated ``__init__``'s first parameter: a name no field can shadow."""


class Record:
    """A base for record classes made :func:`copyable` (it holds no slot of its own)."""

    __slots__ = ()

    def but(self, **changes: Any) -> Self:
        """A copy with ``changes`` (replaced on each class by :func:`copyable`)."""
        raise NotImplementedError(f"{type(self).__name__} is not decorated with @copyable")


def _plain_fields(cls: type, decorator: str, *, slotted: bool = True) -> list[dataclasses.Field[Any]]:
    """The fields of ``cls``, a dataclass (slotted, or without slots of its own when not
    ``slotted``) whose fields are all plain ``__init__`` parameters (``TypeError`` naming
    ``decorator`` otherwise)."""
    fields = list(dataclasses.fields(cls))
    names = [f.name for f in fields]
    init_params = list(inspect.signature(cls.__init__).parameters)[1:]  # type: ignore[misc]
    slots_ok = set(names) == set(getattr(cls, "__slots__", ())) if slotted else "__slots__" not in cls.__dict__
    if (
        getattr(cls, "__post_init__", None) is not None
        or not slots_ok
        or init_params != names  # an InitVar, an init=False field
        or any(f.kw_only for f in fields)
    ):
        raise TypeError(
            f"{cls.__name__}: @{decorator} is for plain records (slotted, or with no slots of their own) "
            "without __post_init__, InitVar, init=False or keyword-only fields"
        )
    return fields


def copyable(cls: type[R]) -> type[R]:
    """Give the frozen dataclass ``cls`` a generated ``but``; returns ``cls``.

    A slotted record's copy has each slot set through its member descriptor. A record without
    slots (``Record`` holds none, so its subclass has a ``__dict__``) is copied by giving the
    copy one merged dict, ``self.__dict__ | changes``: a C-level copy whose cost hardly grows
    with the fields, cheaper from about ten of them (a state copied for every event); reading
    its fields costs a little more than reading slots."""
    if "__slots__" not in cls.__dict__:
        return _copyable_by_dict(cls)
    names = [f.name for f in _plain_fields(cls, "copyable")]
    scope: dict[str, Any] = {"_KEEP": object(), "_new": object.__new__, "_cls": cls}
    scope.update((f"_set_{name}", cls.__dict__[name].__set__) for name in names)
    params = ", ".join(f"{name}=_KEEP" for name in names)
    body = "".join(f"    _set_{name}(new, self.{name} if {name} is _KEEP else {name})\n" for name in names)
    source = f"def but(self, *, {params}):\n    new = _new(_cls)\n{body}    return new\n"
    exec(source, scope)  # generated from the dataclass's own field names, nothing from outside
    return _install_but(cls, scope["but"])


def _copyable_by_dict(cls: type[R]) -> type[R]:
    """:func:`copyable` for a record without slots: the copy's ``__dict__`` is set whole."""
    names = frozenset(f.name for f in _plain_fields(cls, "copyable", slotted=False))
    # The ``__dict__`` descriptor of the first class in the MRO that gave its instances one.
    holder = next(k for k in cls.__mro__ if "__dict__" in k.__dict__)
    count, new, set_fields = len(names), object.__new__, holder.__dict__["__dict__"].__set__

    def but(self: R, **changes: Any) -> R:
        fields = self.__dict__ | changes
        if len(fields) != count:  # a name that is not a field added a key
            unknown = ", ".join(sorted(set(changes) - names))
            raise TypeError(f"{cls.__name__}.but() got an unexpected keyword argument {unknown!r}")
        copy = new(cls)
        set_fields(copy, fields)  # past the frozen __setattr__, as the dataclass's __init__ goes
        return copy

    return _install_but(cls, but)


def _install_but(cls: type[R], but: Any) -> type[R]:
    but.__doc__ = f"A copy of this {cls.__name__} with the fields given changed (``dataclasses.replace``, fast)."
    but.__qualname__ = f"{cls.__qualname__}.but"
    cls.but = but  # type: ignore[method-assign]
    return cls


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen, slotted dataclass ``cls`` a generated ``__init__`` that sets each slot
    through its member descriptor (the dataclass's calls ``object.__setattr__`` per field);
    the parameters, defaults and default factories are the dataclass's. Returns ``cls``."""
    fields = _plain_fields(cls, "fast_init")
    scope: dict[str, Any] = {"_MISSING": object()}
    params, body = [_SELF], []
    for f in fields:
        name = f.name
        scope[f"_set_{name}"] = cls.__dict__[name].__set__
        value = name
        if f.default is not dataclasses.MISSING:
            scope[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_MISSING")
            value = f"_factory_{name}() if {name} is _MISSING else {name}"
        else:
            params.append(name)
        body.append(f"    _set_{name}({_SELF}, {value})\n")
    lines = "".join(body) or "    pass\n"  # a record without fields
    source = f"def __init__({', '.join(params)}):\n{lines}"
    exec(source, scope)  # generated from the dataclass's own fields, nothing from outside
    init = scope["__init__"]
    init.__doc__ = cls.__init__.__doc__
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
