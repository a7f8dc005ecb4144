"""``games.records``: the generated ``but`` and ``__init__`` behave as the dataclass's own."""

from __future__ import annotations

import dataclasses
import doctest
from dataclasses import InitVar, dataclass, field

import pytest

import games.records
from games.records import Record, copyable, fast_init


@dataclass(frozen=True, slots=True)
class Plain:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)


@fast_init
@copyable
@dataclass(frozen=True, slots=True)
class Fast(Record):
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)


def test_doctests_run():
    result = doctest.testmod(games.records)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("args", "kwargs"), [((1,), {}), ((1, "x"), {}), ((1, "x", [2]), {}), ((), {"a": 1, "c": [3]}), ((1,), {"b": "y"})]
)
def test_fast_init_takes_what_the_dataclass_takes(args, kwargs):
    fast, plain = Fast(*args, **kwargs), Plain(*args, **kwargs)
    assert dataclasses.astuple(fast) == dataclasses.astuple(plain)
    assert repr(fast) == repr(plain).replace("Plain", "Fast")


def test_fast_init_keeps_eq_frozenness_and_fresh_default_factories():
    assert Fast(1) == Fast(1, "b", []) and Fast(1) != Fast(2)
    assert Fast(1).c is not Fast(1).c
    with pytest.raises(dataclasses.FrozenInstanceError):
        Fast(1).a = 2  # type: ignore[misc]
    assert Fast(1).but(b="z") == Fast(1, "z")


@pytest.mark.parametrize(("args", "kwargs"), [((), {}), ((1, "x", [], 4), {}), ((1,), {"d": 2}), ((1,), {"a": 1})])
def test_fast_init_refuses_what_the_dataclass_refuses(args, kwargs):
    with pytest.raises(TypeError):
        Plain(*args, **kwargs)
    with pytest.raises(TypeError):
        Fast(*args, **kwargs)


def test_fast_init_refuses_records_it_would_get_wrong():
    @dataclass(frozen=True, slots=True)
    class Posted:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        extra: InitVar[int] = 0

    @dataclass(frozen=True, slots=True)
    class NotInInit:
        a: int
        b: int = field(default=0, init=False)

    @dataclass(frozen=True, slots=True, kw_only=True)
    class KeywordOnly:
        a: int

    @dataclass(frozen=True)
    class NoSlots:
        a: int

    for cls in (Posted, WithInitVar, NotInInit, KeywordOnly, NoSlots):
        with pytest.raises(TypeError, match="plain records"):
            fast_init(cls)


@copyable
@dataclass(frozen=True)
class Unslotted(Record):
    a: int
    b: str = "b"


def test_copyable_without_slots_copies_by_dict():
    one = Unslotted(1)
    two = one.but(b="z")
    assert (two, one) == (Unslotted(1, "z"), Unslotted(1))
    assert two.__dict__ is not one.__dict__
    with pytest.raises(dataclasses.FrozenInstanceError):
        two.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        one.but(c=3)


@copyable
@dataclass(frozen=True)
class UnslottedChild(Unslotted):
    c: int = 0


def test_copyable_without_slots_works_down_a_hierarchy():
    assert UnslottedChild(1, "x", 2).but(c=3, a=0) == UnslottedChild(0, "x", 3)
