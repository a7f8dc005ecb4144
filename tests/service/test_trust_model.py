"""The trust model of docs/fairness.md: every line names the test that checks it, and that test
exists (a Python test function, or a JavaScript test title); a line without one says which piece
of work it waits for."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTIES = ("spectator", "seat", "store reader", "operator")
PENDING = re.compile(r"\*pending: (deal|record)\*")


def _lines() -> list[tuple[str, str, str]]:
    doc = (ROOT / "docs" / "fairness.md").read_text(encoding="utf-8")
    section = doc.split("## The trust model", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| who ")]
    cells = [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows if not set(row) <= set("|-")]
    return [(who, claim, test) for who, claim, test in cells]


def _named(test: str) -> list[str]:
    return re.findall(r"`([^`]+)`", test)


def _exists(name: str) -> bool:
    if "::" in name:
        path, function = name.split("::")
        source = ROOT / path
        return source.is_file() and re.search(rf"^(async )?def {re.escape(function)}\(", source.read_text(), re.M) is not None
    path, _, title = name.partition(": ")
    source = ROOT / path
    return source.is_file() and f'"{title}"' in source.read_text()


def test_every_party_has_its_lines_and_every_line_a_test_or_the_work_it_waits_for():
    lines = _lines()
    assert {who for who, _, _ in lines} == set(PARTIES)
    for party in PARTIES:
        assert sum(who == party for who, _, _ in lines) >= 3, party
    for who, claim, test in lines:
        named = _named(test)
        assert named or PENDING.fullmatch(test), f"{who}: {claim!r} names no test"
        missing = [name for name in named if not _exists(name)]
        assert missing == [], f"{who}: {claim!r} names tests that do not exist: {missing}"


def test_a_line_naming_a_missing_test_is_found():
    assert _exists("tests/service/test_trust_model.py::test_a_line_naming_a_missing_test_is_found")
    assert not _exists("tests/service/test_trust_model.py::test_that_is_not_there")
    assert _exists("clients/js/test/fairness.test.js: a sealed part moved to another event, the chain rewritten")
    assert not _exists("clients/js/test/fairness.test.js: a tampering nobody wrote")
