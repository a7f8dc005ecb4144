"""The examples in the castle modules' docstrings run."""

from __future__ import annotations

import doctest

import pytest

import games.castle
import games.castle.scoring
import games.castle.track


@pytest.mark.parametrize("module", [games.castle, games.castle.scoring, games.castle.track])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0
