"""The bench's own parts (the figures themselves are measured by ``donjon bench``, not by tests)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from bench import run_bench
from bench.die_game import BENCH
from bench.percentiles import percentile
from bench.service import cpu_at
from games.base import fold
from service.fairness.draw_schemes import LegacyRandom

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_engine_keeps_the_engine_contract():
    state = fold(BENCH, BENCH.setup({}, 1, LegacyRandom(1)))
    assert BENCH.legal_moves(state, 0) == [{"type": "roll", "args": {}}]
    assert BENCH.legal_moves(state, None) == []
    events = BENCH.decide(state, 0, {"type": "roll", "args": {}}, LegacyRandom(5))
    assert [e.type for e in events] == ["rolled"] and 1 <= events[0].payload["value"] <= 6
    after = fold(BENCH, events, state)
    assert after == (1, events[0].payload["value"]) and state == (0, 0)
    assert BENCH.view(after, 0)["legal"] == [{"type": "roll", "args": {}}] and not BENCH.is_terminal(after)


def test_percentiles_and_cpu_interpolation():
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert percentile(list(range(101)), 99) == 99
    samples = [(0.0, 10.0, 0.0), (1.0, 10.5, 0.0), (2.0, 11.5, 0.0)]
    assert cpu_at(samples, 1.5) == 11.0
    assert cpu_at(samples, 5.0) == 11.5


async def test_an_unknown_section_is_refused(capsys):
    assert await run_bench(sections=["nope"]) == 2
    assert "unknown section(s) ['nope']" in capsys.readouterr().out


async def test_the_bots_section_plays_bot_only_games_of_each_bot():
    from bench.in_process import bot_figures
    from tests.tinygame import TINY

    figures = await bot_figures({"tiny": TINY}, quick=True)
    assert sorted(figures) == [
        "bots: tiny first x1 game(s) at once, bot moves/s",
        "bots: tiny random x3 game(s) at once, bot moves/s",
    ]
    assert all("moves/game; loop lag max" in value for value in figures.values())


async def test_the_memory_section_measures_a_fresh_node_bounded_and_unbounded():
    import games
    from bench.memory import memory_figures

    engines = {"castle_panic": games.default_engines()["castle_panic"]}  # the quickest games to play
    figures = await memory_figures(engines, games=40)
    assert sorted(figures) == [
        "memory: RSS after loading 40 finished games, cache default bounds",
        "memory: RSS after loading 40 finished games, cache unbounded (as before)",
    ]
    assert all(" MiB (fresh process " in value and "40 games cached" in value for value in figures.values())


def test_the_machine_is_named_with_a_reference_speed():
    from bench import machine_figures

    figures = machine_figures()
    assert list(figures) == [
        "machine: processor, cores, Python",
        "machine: reference loop (pure-Python integer sum), ns per iteration",
        "machine: tile board (games/tileboard/board.py)",
    ]
    assert f"{os.cpu_count()} cores" in figures["machine: processor, cores, Python"]
    assert float(figures["machine: reference loop (pure-Python integer sum), ns per iteration"]) > 0
    # The suite imports the source tree, where nothing compiles the board (setup.py).
    assert figures["machine: tile board (games/tileboard/board.py)"].startswith("plain Python")


def test_spread_lines_up_each_figure_over_the_runs():
    from bench import spread

    assert spread([{"x": "1 ms", "y": "a"}, {"x": "2 ms"}, {"x": "3 ms", "y": "c"}]) == {
        "x": "1 ms | 2 ms | 3 ms",
        "y": "a | - | c",
    }


async def test_runs_repeat_the_sections_and_print_the_spread(capsys, monkeypatch):
    import service.ops.logs
    from tests.tinygame import TINY

    # run_bench logs as production does, to nowhere; the suite's logging must outlive this test
    # (structlog keeps a logger bound to the configuration it first logged under).
    monkeypatch.setattr(service.ops.logs, "configure_logging", lambda *args, **kwargs: None)
    assert await run_bench(sections=["engines"], runs=2, engines={"tiny": TINY}, quick=True) == 0
    out = capsys.readouterr().out
    assert "--- run 1 of 2" in out and "--- run 2 of 2" in out
    assert "--- every figure over the 2 runs, in run order" in out
    assert "machine: reference loop" in out
    assert await run_bench(sections=["engines"], runs=0) == 2


def _imports(path: Path) -> list[tuple[str, bool]]:
    """The modules ``path`` imports, each with whether the import is at the module's top level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.module, id(node) in top))
    return found


def test_the_bench_stands_outside_the_runtime_packages_and_one_way():
    # The runtime never needs the benchmark (the CLI imports it only inside `donjon bench`), and
    # the benchmark never imports the CLI: what both use lives in service/run/serving.py, console.py.
    for package in ("games", "events", "projections", "service"):
        for path in (ROOT / package).rglob("*.py"):
            for module, at_top in _imports(path):
                if module == "bench" or module.startswith("bench."):
                    assert path == ROOT / "service" / "run" / "cli.py" and not at_top, f"{path} imports {module}"
    for path in (ROOT / "bench").rglob("*.py"):
        assert all(module != "service.run.cli" for module, _ in _imports(path)), f"{path} imports the CLI"
    assert not (ROOT / "service" / "bench").exists() and not (ROOT / "events" / "bench.py").exists()
