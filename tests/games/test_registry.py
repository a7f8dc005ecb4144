"""The registry checks every engine when it loads its game: a package whose engine lacks a hook,
has one of the wrong type or takes the wrong arguments is refused with a message naming the game
and the hook (at start, not as a 500 at the first request), and every served game passes."""

from __future__ import annotations

from typing import Any

import pytest

from games import GAME_MODULES, default_engines, find_engine, load_engine
from games.base import Engine, EngineRefused, check_engine
from games.base.contract import ATTRIBUTES, HOOKS
from tests.tinygame import TinyEngine


def test_every_served_game_keeps_the_contract() -> None:
    engines = default_engines()
    assert sorted(engines) == sorted(GAME_MODULES)
    for name, engine in engines.items():
        assert check_engine(name, engine) is engine is find_engine(name)


def test_the_check_names_every_member_of_the_engine_protocol() -> None:
    members = {name for name in vars(Engine) if not name.startswith("_")} | set(Engine.__annotations__)
    assert members == set(HOOKS) | set(ATTRIBUTES)


def test_a_game_package_missing_a_hook_is_refused_naming_game_and_hook() -> None:
    with pytest.raises(EngineRefused, match=r"game 'broken_game': hook 'decide' is missing") as refused:
        load_engine("broken_game", "tests.games.broken_game")
    assert (refused.value.game, refused.value.hook) == ("broken_game", "decide")


def test_a_package_without_an_engine_is_refused() -> None:
    with pytest.raises(EngineRefused, match=r"game 'nothing': hook 'ENGINE' is missing: package tests.games"):
        load_engine("nothing", "tests.games")


class _Wrong(TinyEngine):
    """The tiny game with one thing wrong, set per test."""


@pytest.mark.parametrize(("attribute", "value", "message"), [
    ("options", ["seats"], r"hook 'options' must be a Mapping\[str, OptionSpec\], got \['seats'\]"),
    ("secret_options", {"tile_order"}, r"hook 'secret_options' must be a frozenset\[str\]"),
    ("min_seats", True, r"hook 'min_seats' must be a int, got True"),
    ("name", "other", r"hook 'name' must be the game id 'tiny' it is registered under, got 'other'"),
    ("view", "a view", r"hook 'view' must be a method, got 'a view'"),
    ("evolve", lambda self, state: state, r"hook 'evolve' must take 2 argument\(s\), has \(state\)"),
])
def test_a_hook_of_the_wrong_type_is_refused(attribute: str, value: Any, message: str) -> None:
    engine = _Wrong()
    setattr(engine, attribute, value.__get__(engine) if callable(value) else value)
    with pytest.raises(EngineRefused, match=f"game 'tiny': {message}"):
        check_engine("tiny", engine)


def test_an_engine_with_half_of_the_split_views_is_refused() -> None:
    engine = _Wrong()
    engine.public_view = lambda state: {}  # type: ignore[attr-defined]
    with pytest.raises(EngineRefused, match=r"game 'tiny': hook 'private_view' is missing: an engine with "
                                            r"public_view\(\) splits its views and needs both"):
        check_engine("tiny", engine)
