"""The shape of ``events/`` holds: small modules and functions, imports one way (no circles),
and the store a package whose parts each do one job."""

from __future__ import annotations

import ast
from pathlib import Path

EVENTS = Path(__file__).resolve().parents[2] / "events"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


def _modules() -> dict[str, Path]:
    names = {}
    for path in sorted(EVENTS.rglob("*.py")):
        parts = path.relative_to(EVENTS.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def test_no_module_of_events_is_over_500_lines() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    assert not {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}


def test_no_function_of_events_is_over_60_lines() -> None:
    long = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {length} lines")
    assert not long


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The ``events`` modules ``name`` imports (``from events import codec`` names the module
    ``events.codec``; a package's own ``__init__`` importing its parts is not an edge back)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module in modules and not node.level:
            subs = {f"{node.module}.{alias.name}" for alias in node.names}
            found.update(subs & modules.keys() or {node.module})
    return found - {name}


def test_events_imports_go_one_way() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    # A package's part imports siblings by their full names, which runs the package first: that
    # is Python's order, not a circle, so the edge from a part to its own package is left out.
    for name, targets in graph.items():
        targets.difference_update({parent for parent in graph if name.startswith(parent + ".")})
    circles = []
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                circles.append(" -> ".join([*trail[trail.index(target):], target]))
            elif target not in state:
                visit(target, [*trail, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not circles


def test_the_store_is_a_package_of_parts_and_keeps_its_import_path() -> None:
    from events.store import EventStore

    assert (EVENTS / "store" / "__init__.py").is_file()
    assert {"append", "read", "meta", "lobby"} <= {p.stem for p in (EVENTS / "store").glob("*.py")}
    assert EventStore.__module__ == "events.store"
    assert (EVENTS / "append.lua").is_file()  # package data: pyproject ships "*.lua"
