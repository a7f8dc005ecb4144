"""The examples in the castle_panic docstrings and in docs/games/castle_panic.md run."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

import games.castle_panic
import games.castle_panic.state

DOC = Path(__file__).resolve().parents[3] / "docs" / "games" / "castle_panic.md"


@pytest.mark.parametrize("module", [games.castle_panic, games.castle_panic.state])
def test_docstring_examples_run(module) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0


def test_the_python_examples_in_the_game_doc_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})
