"""Packaging that pyproject.toml cannot say: the JavaScript client ships from its one copy, and
the tile board is compiled.

``clients/js/src/`` (the client's ES modules, served to the web app at ``/app/client/``) becomes the
package data of ``service.web.client`` in the wheel, without a second copy in the repository.

``games/tileboard/board.py`` (with the modules it is built from: ``fit.py``, ``features.py``,
``settling.py``) is compiled to C extensions by mypyc when the package is built to install
(``pip install .``): every placement of a tile game runs through it, and compiled a fold of
The Castle runs ~30 % faster. The source ships beside it, and the install goes on with the pure
module when nothing can compile (no C compiler), or with ``DONJON_PURE_PYTHON=1``. Editable
installs (``pip install -e``) never compile it, so that an edited ``board.py`` is what runs.
"""

import os
import sys

from setuptools import Extension, find_namespace_packages, setup
from setuptools.command.build_ext import build_ext

PACKAGES = ["service*", "events*", "projections*", "games*", "bench*"]
CLIENT = {"service.web.client": "clients/js/src"}
COMPILED = [
    "games/tileboard/board.py",
    "games/tileboard/fit.py",
    "games/tileboard/features.py",
    "games/tileboard/settling.py",
]


class build_compiled(build_ext):
    """Builds :data:`COMPILED` with mypyc in place of the placeholder extension below, or
    nothing (editable installs, ``DONJON_PURE_PYTHON``, or when compiling fails)."""

    def finalize_options(self) -> None:
        compiled = []
        if not (self.editable_mode or os.environ.get("DONJON_PURE_PYTHON")):
            try:
                from mypyc.build import mypycify

                compiled = mypycify(["--no-warn-unused-configs", *COMPILED], opt_level="3")
            except (Exception, SystemExit) as exc:  # no mypyc, or it refused the source
                _pure(exc)
        self.distribution.ext_modules = self.extensions = compiled
        super().finalize_options()

    def run(self) -> None:
        try:
            super().run()
        except (Exception, SystemExit) as exc:  # no C compiler: the pure module works
            _pure(exc)
            for extension in self.extensions:  # never half a compiled module beside the source
                built = self.get_ext_fullpath(extension.name)
                if os.path.exists(built):
                    os.remove(built)


def _pure(reason: BaseException) -> None:
    print(f"donjon: installing the tile board as plain Python ({reason!r})", file=sys.stderr)


# Namespace packages too: data folders without an ``__init__.py`` (``games/castle/data/``) carry
# package data that the service reads at start. ``bench`` is the benchmark (``donjon bench``),
# installed beside the runtime packages but not inside them.
setup(
    packages=find_namespace_packages(include=PACKAGES) + list(CLIENT),
    package_dir=CLIENT,
    # A placeholder, so that the build runs build_ext (and the wheel is marked for this platform).
    ext_modules=[Extension("games.tileboard.board", sources=[])],
    cmdclass={"build_ext": build_compiled},
)
