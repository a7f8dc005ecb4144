"""The shape of ``games/`` holds (issue 25): no module over 500 lines, no function over 60, no
import circle among its modules, and the three games keep one shape (the same module names for
the same jobs), so that it cannot drift back."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

GAMES = Path(__file__).resolve().parents[2] / "games"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
DATA_TABLES: frozenset[str] = frozenset()
"""Modules exempt from the size limit because they are data tables (none, for now)."""

SHAPE = ("__init__", "engine", "state", "rules", "legal", "evolve", "scoring", "views", "bots")
"""The modules every game has, each for the same job: the package exposes ``ENGINE``; ``engine``
the engine class; ``state`` the frozen state; ``rules`` setup, ``decide`` and the commands;
``legal`` the legal moves and the queries behind them; ``evolve`` the fold of events; ``scoring``
the points; ``views`` views, redaction and summary; ``bots`` the named bots."""


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(GAMES.rglob("*.py")):
        parts = path.relative_to(GAMES.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``games`` that ``name`` imports, type-only imports included: ``from
    pkg import sub`` names the submodule when there is one."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            subs = {f"{base}.{alias.name}" for alias in node.names} & known
            found |= subs or {base}
    return found & known


def _graph() -> dict[str, set[str]]:
    modules = dict(_modules())
    known = set(modules)
    return {name: _imports(name, path, known) - {name} for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circle_in_games() -> None:
    assert _cycle(_graph()) is None


def test_the_cycle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_module_over_500_lines() -> None:
    long = {name: n for name, path in _modules() if name not in DATA_TABLES
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_no_function_over_60_lines() -> None:
    long = {}
    for name, path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{name}.{node.name}"] = length
    assert long == {}


def test_the_three_games_keep_one_shape() -> None:
    for game in ("carcassonne", "castle", "castle_panic"):
        present = {path.stem for path in (GAMES / game).glob("*.py")}
        assert set(SHAPE) <= present, (game, sorted(set(SHAPE) - present))


def test_no_game_module_imports_its_engine_but_the_package_and_bots() -> None:
    graph = _graph()
    for game in ("carcassonne", "castle", "castle_panic"):
        importers = {name for name, deps in graph.items() if f"games.{game}.engine" in deps}
        assert importers <= {f"games.{game}", f"games.{game}.bots"}, (game, importers)
