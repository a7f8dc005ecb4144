"""tests/conftest.py's guard: an ERROR log fails the test unless it is marked allow_error_logs."""

from __future__ import annotations

from pathlib import Path

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def test_error_logs_fail_a_test_unless_it_allows_them(pytester) -> None:
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(
        test_logs="""
import logging
import pytest
import structlog

def test_stdlib_error():
    logging.getLogger("donjon.x").error("boom %s", 1)

def test_structlog_error():
    structlog.get_logger("donjon.y").error("kaboom", game_id="g1")

def test_warning_is_fine():
    logging.getLogger("donjon.x").warning("careful")

@pytest.mark.allow_error_logs
def test_allowed():
    logging.getLogger("donjon.x").error("expected")
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*ERROR donjon.x: boom 1*", "*ERROR donjon.y: event='kaboom'*game_id='g1'*", "FAILED test_logs.py::test_stdlib_error*", "FAILED test_logs.py::test_structlog_error*"])
