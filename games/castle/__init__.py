"""Carcassonne: The Castle with The Falcon expansion (game id ``castle``), a pure engine.

``ENGINE`` plays on the shipped provisional dataset ``data/castle-v1.json``; that file is read
once, when this package is imported, and never during play. An operator who owns the game can
serve a corrected dataset without touching code: the service reads the file named by
``DONJON_CASTLE_DATA`` and builds the engine with :func:`engine_from_json` (a file that fails
validation is refused with one error listing every problem).

>>> ENGINE.name, ENGINE.min_seats, ENGINE.max_seats, sorted(ENGINE.options)
('castle', 2, 2, ['falcon', 'halt_at_gates', 'ties', 'tile_order'])
"""

from __future__ import annotations

from importlib import resources

from games.castle.data import Dataset, DatasetError, Issue, dataset_from_json, parse_dataset, validate
from games.castle.engine import CastleEngine

__all__ = [
    "ENGINE",
    "DATA_ENV",
    "SHIPPED_DATASET",
    "CastleEngine",
    "Dataset",
    "DatasetError",
    "Issue",
    "dataset_from_json",
    "engine_from_json",
    "parse_dataset",
    "shipped_dataset",
    "validate",
]

DATA_ENV = "DONJON_CASTLE_DATA"
"""Environment variable the service reads: a path to a corrected dataset file."""

SHIPPED_DATASET = "castle-v1.json"


def shipped_dataset_text() -> str:
    return resources.files(__name__).joinpath("data", SHIPPED_DATASET).read_text(encoding="utf-8")


def shipped_dataset() -> Dataset:
    return dataset_from_json(shipped_dataset_text())


def engine_from_json(text: str) -> CastleEngine:
    """An engine over a dataset file's text; raises :class:`DatasetError` listing every issue."""
    return CastleEngine(dataset_from_json(text))


ENGINE = CastleEngine(shipped_dataset())
