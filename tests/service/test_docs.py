"""The docs say what the code does: docstring examples run, and the tables of settings, routes,
error codes and metrics in README.md and docs/protocol.md match the code, in both directions.

Each failure names what is missing and where, so a setting, route, code or series added on one
side only is caught with the line to write."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import re
from pathlib import Path

import pytest

from games.base import RuleError
from service.errors import ErrorCode
from service.ops.metrics import Metrics
from service.ops.settings import PREFIX, Settings
from service.run.app import create_app
from tests.service.conftest import ENGINES, settings_for

MODULES = [
    "service.bots", "service.play.decisions", "service.fairness.seeds", "service.ops.metrics", "service.play.features", "projections.game",
    "projections.lifecycle",
]
ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PROTOCOL = ROOT / "docs" / "protocol.md"
SETTINGS_MODULE = ROOT / "service" / "ops" / "settings.py"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


# --- reading the docs' tables ------------------------------------------------------------------


def section(path: Path, heading: str) -> str:
    """The text of the markdown section ``heading`` (up to the next heading of its level or above)."""
    text = path.read_text(encoding="utf-8")
    level = heading.split(" ")[0]
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1:]
    ends = [m.start() for m in re.finditer(rf"^#{{1,{len(level)}}} ", rest, flags=re.M)]
    return rest[: ends[0]] if ends else rest


def table_rows(text: str) -> list[list[str]]:
    """The cells of every row of the markdown tables in ``text`` (header and rule rows left out)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or re.fullmatch(r"\|[-| :]+\|", line.strip()):
            continue
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        rows.append(cells)
    return rows[1:] if rows else rows  # the first row of the first table is its header


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def differences(documented: set[str], actual: set[str], doc: str, code: str) -> list[str]:
    problems = [f"{name} is in {code} but not in {doc}" for name in sorted(actual - documented)]
    problems += [f"{name} is in {doc} but not in {code}" for name in sorted(documented - actual)]
    return problems


# --- settings ----------------------------------------------------------------------------------


def settings_variables() -> set[str]:
    return {PREFIX + spec.name.upper() for spec in dataclasses.fields(Settings)}


def documented_variables(rows: list[list[str]], column: int = 0) -> set[str]:
    return {name for row in rows for name in re.findall(rf"{PREFIX}[A-Z0-9_]+", row[column])}


def test_the_readme_lists_every_setting_and_only_settings():
    documented = documented_variables(table_rows(section(README, "## Configuration")))
    problems = differences(
        documented, settings_variables(), "README.md (## Configuration table)", "service/ops/settings.py (Settings)"
    )
    assert not problems, "\n".join(problems)


def test_the_settings_docstring_lists_every_setting_and_only_settings():
    doc = importlib.import_module("service.ops.settings").__doc__ or ""
    documented = set(re.findall(rf"^``({PREFIX}[A-Z0-9_]+)``", doc, flags=re.M))
    problems = differences(
        documented, settings_variables(), "the table of service/ops/settings.py's docstring", "Settings' fields"
    )
    assert not problems, "\n".join(problems)


def test_the_protocol_names_only_settings_that_exist():
    """docs/protocol.md lists the settings a client may notice (not all of them): each must exist."""
    operator = documented_variables(table_rows(section(PROTOCOL, "## Operator settings")))
    limits = documented_variables(table_rows(section(PROTOCOL, "## Limits")), column=2)
    assert operator and limits
    problems = [
        f"{name} is in docs/protocol.md ({where}) but not in service/ops/settings.py (Settings)"
        for where, names in (("## Operator settings", operator), ("## Limits", limits))
        for name in sorted(names - settings_variables())
    ]
    assert not problems, "\n".join(problems)


# --- routes ------------------------------------------------------------------------------------


def app_routes() -> set[str]:
    app = create_app(settings_for("redis://127.0.0.1:1/0"), engines=ENGINES)
    return {
        f"{route.method} {route.resource.canonical}"
        for route in app.router.routes()
        if route.resource is not None and route.method != "HEAD"  # aiohttp adds HEAD to every GET
    }


def documented_routes() -> set[str]:
    # A heading may name several routes that share one answer: ### `GET /a`, `GET /b`
    headings = re.findall(r"^### (.*`[A-Z]+ /.*)$", PROTOCOL.read_text(encoding="utf-8"), flags=re.M)
    routes = (re.findall(r"`([A-Z]+) ([^`?\s]+)[^`]*`", heading) for heading in headings)
    return {f"{method} {path}" for found in routes for method, path in found}


def test_the_protocol_documents_every_route_and_only_routes():
    documented = documented_routes()
    assert "GET /games/{id}/ws" in documented
    problems = differences(
        documented, app_routes(), "docs/protocol.md (a '### `METHOD /path`' heading)", "the app's router"
    )
    assert not problems, "\n".join(problems)


# --- error codes -------------------------------------------------------------------------------


def documented_codes() -> dict[str, str]:
    """code -> the HTTP status the docs give it."""
    rows = table_rows(section(PROTOCOL, "## Error codes"))
    return {code: row[1] for row in rows for code in ticked(row[0])}


def test_the_protocol_documents_every_error_code_and_only_codes():
    documented = documented_codes()
    actual = {code.value for code in ErrorCode} | {RuleError.code}  # a rule refusal without a code of its own
    problems = differences(
        set(documented), actual, "docs/protocol.md (## Error codes table)", "service/errors.py (ErrorCode)"
    )
    problems += [
        f"{code.value} answers HTTP {code.http_status} but docs/protocol.md (## Error codes) says "
        f"{documented[code.value]}"
        for code in ErrorCode
        if code.value in documented and documented[code.value] != str(code.http_status)
    ]
    assert not problems, "\n".join(problems)


# --- metrics -----------------------------------------------------------------------------------

_SERIES_SUFFIX = {"counter": "_total", "info": "_info"}
_DOCUMENTED_TYPE = {"info": "gauge"}


def exported_series() -> dict[str, tuple[str, set[str]]]:
    """Every donjon_* series :class:`Metrics` exports -> (its type as the docs name it, its labels)."""
    metrics = Metrics(node_id="n", games={"tiny": ["first"]})
    declared = {
        series.name: set(series.label_names) for series in vars(metrics).values() if hasattr(series, "label_names")
    }
    found = {}
    for family in metrics.registry.collect():
        if not family.name.startswith("donjon_"):
            continue
        name = family.name + _SERIES_SUFFIX.get(family.type, "")
        sampled = {label for sample in family.samples for label in sample.labels} - {"le"}
        found[name] = (_DOCUMENTED_TYPE.get(family.type, family.type), declared.get(name, sampled) | {"node"})
    return found


def documented_series() -> dict[str, tuple[str, set[str]]]:
    found = {}
    for row in table_rows(section(PROTOCOL, "## Metrics")):
        labels = set(ticked(re.sub(r"\([^)]*\)", "", row[2])))  # "(`ok` or an error code)" are values
        for name in ticked(row[0]):
            found[name] = (row[1], labels)
    return found


def test_the_protocol_documents_every_metric_and_only_metrics():
    documented, exported = documented_series(), exported_series()
    problems = differences(
        set(documented), set(exported), "docs/protocol.md (## Metrics table)", "service/ops/metrics.py (Metrics)"
    )
    for name in sorted(set(documented) & set(exported)):
        (doc_type, doc_labels), (kind, labels) = documented[name], exported[name]
        if doc_type != kind:
            problems.append(f"{name} is a {kind} but docs/protocol.md (## Metrics) says {doc_type}")
        if doc_labels | {"node"} != labels | {"node"}:  # every series has node; the table says so once
            problems.append(
                f"{name} has labels {sorted(labels - {'node'})} but docs/protocol.md (## Metrics) says "
                f"{sorted(doc_labels)}"
            )
    assert not problems, "\n".join(problems)
