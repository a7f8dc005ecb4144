"""The examples in the service's and the projections' docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["service.bots", "service.seeds", "service.metrics", "projections.game"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
