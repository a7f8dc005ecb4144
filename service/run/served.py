"""The engines a service serves: the registry's (or the caller's), with operator datasets in.

An operator who owns The Castle can serve a corrected dataset without touching code: the file
named by ``DONJON_CASTLE_DATA`` (``games.castle.DATA_ENV``, read once with the other settings)
is parsed and validated by ``games.castle.engine_from_json`` when the app is built, and the
engine over it serves ``castle`` instead of the shipped one. An unreadable or invalid file stops
the service from starting, with the dataset's own message, which lists every problem at once.
``donjon replay`` builds its engines the same way, so it re-runs a game on the data it was
played with.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import games
from games.base import Engine
from service.ops.settings import Settings, SettingsError

__all__ = ["served_engines", "castle_engine_from_file"]

CASTLE = "castle"


def castle_engine_from_file(path: Path) -> Engine[Any]:
    """The Castle's engine over the dataset file at ``path``; :class:`SettingsError` naming the
    variable and the file, with every problem of the dataset, when it cannot be used."""
    from games.castle import DATA_ENV, DatasetError, engine_from_json

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{DATA_ENV}={str(path)!r} cannot be read: {exc}") from None
    try:
        return engine_from_json(text)
    except DatasetError as exc:
        raise SettingsError(f"{DATA_ENV}={str(path)!r} is not a usable dataset: {exc}") from None


def served_engines(settings: Settings, engines: Mapping[str, Engine[Any]] | None = None) -> dict[str, Engine[Any]]:
    """``engines`` (default: :func:`games.default_engines`) with ``castle`` built from
    ``settings.castle_data`` when that is set and ``castle`` is served."""
    served = dict(engines) if engines is not None else games.default_engines()
    if settings.castle_data is not None and CASTLE in served:
        served[CASTLE] = castle_engine_from_file(settings.castle_data)
    return served
