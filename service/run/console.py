"""What the command-line tools print: :func:`out`, their one way to print a result (the
service itself only logs). The CLI (:mod:`service.run.cli`) and the benchmark (``bench/``) share it."""

from __future__ import annotations

import sys

__all__ = ["out"]


def out(text: str = "") -> None:
    """The command-line tools' one way to print a result."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
