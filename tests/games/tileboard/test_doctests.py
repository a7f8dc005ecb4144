"""The examples in the tile-board and Carcassonne docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "games.tileboard.tiles",
    "games.tileboard.majority",
    "games.tileboard.draw",
    "games.carcassonne.tiles",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
