"""The house keeps its shape: read from the code itself (``ast``, nothing imported or run), every
Python package of the project has no import circles between its modules, no module over 500
lines (data tables aside), no function over 60 lines; nothing outside ``events/`` touches a
private member of the store; and the rooms ``docs/architecture.md`` draws are the folders there.

What another room's work is still fixing would be listed in :data:`PENDING`, by name; an entry
that no longer offends fails too, so the list only shrinks. It is empty: every package keeps the
rules, and ``service/`` may never have an entry.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("games", "events", "projections", "service", "bench")
"""Every Python package of the project (``tests/`` aside)."""
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
DATA_TABLES = frozenset({"games/castle/data.py"})
"""Modules that are mostly a data table (The Castle's tiles, wall and track), exempt from the
module size; their functions are not."""

PENDING: frozenset[str] = frozenset()
"""Offences another room's work is still fixing, by name (``"lines: bench/x.py"``,
``"function: bench/x.py:name"``): none now that bench/ keeps the rules too. Should one ever be
listed, it cannot grow, and it fails once fixed."""


def _files() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_of(path): path for path in _files()}


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _imported(path: Path) -> set[str]:
    """The project's modules ``path`` imports, anywhere in it (in a function or under
    ``TYPE_CHECKING`` too: a circle is a circle to whoever reads the code)."""
    modules = _modules()
    here = _module_of(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in modules:  # `from package import module`
                    found.add(target)
                elif base in modules:
                    found.add(base)
    found.discard(here)
    return found


def _circles() -> list[list[str]]:
    """The strongly connected parts of the import graph with more than one module (Tarjan)."""
    graph = {module: sorted(_imported(path)) for module, path in _modules().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == module:
                    break
            if len(part) > 1:
                circles.append(sorted(part))

    for module in graph:
        if module not in index:
            visit(module)
    return circles


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _store_private_members() -> set[str]:
    """The private names of the event store's classes (methods and attributes)."""
    names: set[str] = set()
    for path in sorted((ROOT / "events" / "store").glob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _private(node.name):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and _private(node.attr) and ast.unparse(node.value) == "self":
                names.add(node.attr)
    return names


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _names_store(node: ast.expr) -> bool:
    """True for an expression that reads as the store: ``store``, ``self.store``, ``app[STORE]``."""
    return "store" in ast.unparse(node).lower()


def offences() -> set[str]:
    found = {"circle: " + ", ".join(circle) for circle in _circles()}
    private = _store_private_members()
    for path in _files():
        rel = _rel(path)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES and rel not in DATA_TABLES:
            found.add(f"lines: {rel}")
        tree = _tree(path)
        for function in _functions(tree):
            assert function.end_lineno is not None
            if function.end_lineno - function.lineno + 1 > MAX_FUNCTION_LINES:
                found.add(f"function: {rel}:{function.name}")
        for node in ast.walk(tree):
            outside = not rel.startswith("events/")
            if outside and isinstance(node, ast.Attribute) and node.attr in private and _names_store(node.value):
                found.add(f"private store member: {rel}")
    return found


def test_the_house_keeps_its_shape() -> None:
    found = offences()
    new = sorted(found - PENDING)
    assert not new, "the layout drifted (see docs/architecture.md, 'Rules of the house'):\n" + "\n".join(new)
    fixed = sorted(entry for entry in PENDING - found)
    assert not fixed, "fixed, so take these out of PENDING in tests/test_layout.py:\n" + "\n".join(fixed)


def _in_service(entry: str) -> bool:
    subject = entry.split(": ", 1)[1]
    return any(part.startswith(("service/", "service.")) for part in subject.split(", "))


def test_service_has_no_offence_at_all() -> None:
    assert not {entry for entry in PENDING if _in_service(entry)}
    assert not {entry for entry in offences() if _in_service(entry)}


def test_the_private_member_check_sees_one() -> None:
    assert "_append_script" in _store_private_members()
    assert _names_store(ast.parse("self.store._call", mode="eval").body.value)  # type: ignore[attr-defined]


def _documented_rooms() -> set[str]:
    """The folders the rooms table of docs/architecture.md names (``| `service/edge/` | ...``)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The rooms", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+/(?:[a-z_]+/)?)`", section, re.MULTILINE))


def test_the_rooms_are_the_folders_docs_architecture_draws() -> None:
    documented = _documented_rooms()
    actual = {f"{package}/" for package in PACKAGES}
    actual |= {
        f"service/{folder.name}/"
        for folder in (ROOT / "service").iterdir()
        if folder.is_dir() and (folder / "__init__.py").exists()
    }
    assert documented == actual, (sorted(documented - actual), sorted(actual - documented))
    loose = sorted(p.name for p in (ROOT / "service").glob("*.py") if p.name not in {"__init__.py", "__main__.py"})
    assert loose == ["errors.py"], f"service/ holds rooms, and the one table of error codes beside them: {loose}"


def test_the_import_reader_sees_what_it_must() -> None:
    # The checks are only as good as the reader: a circle through a function-level import and a
    # `from package import module` is a circle.
    assert "service.play.decisions" in _imported(ROOT / "service" / "play" / "seating.py")
    assert "service.play.cache" in _imported(ROOT / "service" / "play" / "commands.py")
    assert all(len(circle) > 1 for circle in _circles())


def test_the_runtime_packages_doctests_run_with_the_suite() -> None:
    import tomllib

    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert {"tests", "service", "events", "games", "projections"} <= set(options["testpaths"])
    assert "--doctest-modules" in options["addopts"]
