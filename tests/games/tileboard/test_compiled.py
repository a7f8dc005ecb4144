"""The tile board as an installed donjon runs it: compiled by mypyc, as ``setup.py`` builds it.

The rest of the suite runs under an editable install, where the board is plain Python; here a copy
of ``games/`` is compiled with the project's own ``setup.py`` and the tile games' tests run again
on it, in a process that imports the compiled module (and checks that it does).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SUITES = ["tests/games/tileboard", "tests/games/carcassonne", "tests/games/castle"]

DRIVER = """
import sys
import games.tileboard.board as board
import games.tileboard.features as features
import games.tileboard.fit as fit
import games.tileboard.settling as settling
for module in (board, fit, features, settling):  # every module of setup.py's COMPILED
    assert module.__file__.endswith(".so"), module.__file__  # the compiled module, not the source
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "--import-mode=append", f"--ignore={sys.argv[1]}", *sys.argv[2:]]))
"""


def test_the_tile_games_pass_their_tests_on_the_compiled_board(tmp_path):
    shutil.copy(ROOT / "setup.py", tmp_path)
    shutil.copytree(ROOT / "games", tmp_path / "games", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    build = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, capture_output=True, text=True,
        timeout=120,  # ~8 s here; under the suite's own 300 s, so that no child outlives the test
    )
    assert build.returncode == 0, build.stderr[-2000:]
    assert "as plain Python" not in build.stderr, build.stderr[-2000:]
    for name in ("board", "fit", "features", "settling"):
        assert list((tmp_path / "games" / "tileboard").glob(f"{name}.*.so")), name

    # -P: the driver's folder is not put first on the path, so ``games`` is the compiled copy.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "HOME": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-P", "-c", DRIVER, __file__, *SUITES], cwd=ROOT, env=env, capture_output=True, text=True, timeout=150
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
