"""The Castle's physical data as a versioned, validated dataset.

The rules of Carcassonne: The Castle are well known, its physical data is not: the exact tiles,
the outline of the castle interior, the start spaces printed on the wall and the track numbers
of the corner towers could not be found in any readable source. So all of it is data, read from
a JSON file (``games/castle/data/castle-v1.json`` ships with a provisional dataset) and checked
when loaded. An operator who owns the game can supply a corrected file without touching code:
:func:`dataset_from_json` takes the file's text, and the engine takes the loaded dataset.

Validation reports every problem at once (like python-chess's ``Status`` flags): :func:`validate`
returns a list of :class:`Issue` values naming the entry and the field, and
:func:`parse_dataset` raises one :class:`DatasetError` whose message lists them all.

File format (schema 1), see the shipped file for a complete example::

    {"schema": 1, "name": "castle-v1", "provisional": {"tiles": "why", ...},
     "components": {"followers_in_supply": 6, "aerie_tokens": 12},
     "tiles": [{"id": "B01", "count": 6, "ports": "cpd ddd dpc ccc",
                "segments": {"c": {"kind": "court"}, "p": {"kind": "path"}, ...}}, ...],
     "falcon_tiles": [... 18 entries, count 1 ...],
     "boards": {"base": {"interior": [".########.", ...], "start_spaces": [...]},
                "falcon": {...}},
     "track": {"length": 100, "towers": [{"spaces": [0, 1], "token": false}, ...],
               "gates": [[27, 28], ...]},
     "wall_tiles": {"copies": 2, "on_towers": 13, "kinds": {"extra_turn": {"effect": ...}},
                    "numbering": {"original": {"1": "extra_turn", ...}, "polish": {...}}}}

A port string has 12 tokens, three per side clockwise from the north-west corner
(``Nw N Ne En E Es Se S Sw Ws W Wn``), for the tile as printed (rotation 0). The same token on
several ports is one segment. ``-`` (start spaces only) marks a port with no segment. Segment
fields: ``kind`` (path, house, tower, court, chapel), ``end`` (a path with one port ends at a
``square``, or, on a start space, at the ``start`` space), ``fountain`` (path), ``markets``
(court), ``aeries`` (Falcon tiles), ``name`` (a segment without ports, e.g. a closed chapel).
"""

from __future__ import annotations

import json
from typing import Any

from games.castle.dataset import (
    EXPECTED,
    SCHEMA,
    BoardShape,
    Dataset,
    DatasetError,
    Issue,
    Kind,
    StartSpace,
    Tower,
    TrackDef,
    WallEffect,
    WallTileKind,
    build_tile,
)
from games.castle.validation import Checker, interior_cells, validate

__all__ = [
    "SCHEMA",
    "EXPECTED",
    "Kind",
    "WallEffect",
    "Issue",
    "DatasetError",
    "StartSpace",
    "BoardShape",
    "Tower",
    "TrackDef",
    "WallTileKind",
    "Dataset",
    "validate",
    "parse_dataset",
    "dataset_from_json",
]


# --- building -------------------------------------------------------------------------------


def parse_dataset(data: Any) -> Dataset:
    """A :class:`Dataset` from decoded JSON; raises :class:`DatasetError` listing every issue."""
    issues = validate(data)
    if issues:
        name = data.get("name") if isinstance(data, dict) else None
        raise DatasetError(issues, name if isinstance(name, str) else "dataset")
    tiles = tuple(build_tile(e["id"], e, "base") for e in data["tiles"])
    falcon = tuple(build_tile(e["id"], e, "falcon") for e in data["falcon_tiles"])
    counts = {e["id"]: e["count"] for e in (*data["tiles"], *data["falcon_tiles"])}
    boards = {}
    for key, board in data["boards"].items():
        interior = interior_cells(Checker(), key, board["interior"]) or frozenset()
        starts = tuple(
            StartSpace(s["id"], s["x"], s["y"], build_tile(s["id"], s, "start"), bool(s.get("gate")))
            for s in board["start_spaces"]
        )
        boards[key] = BoardShape(key, interior, starts)
    track = data["track"]
    towers = tuple(Tower(i, (t["spaces"][0], t["spaces"][1]), t["token"]) for i, t in enumerate(track["towers"]))
    gates = tuple(sorted((g[0], g[1]) for g in track["gates"]))
    wall = data["wall_tiles"]
    numbers = {
        edition: {kind: int(number) for number, kind in mapping.items()}
        for edition, mapping in wall["numbering"].items()
    }
    wall_kinds = tuple(
        sorted(
            (
                WallTileKind(
                    name,
                    WallEffect(spec["effect"]),
                    Kind(spec["feature"]) if "feature" in spec else None,
                    spec.get("points"),
                    numbers["original"][name],
                    numbers["polish"][name],
                )
                for name, spec in wall["kinds"].items()
            ),
            key=lambda k: k.original,
        )
    )
    return Dataset(
        name=data["name"],
        title=data.get("title", data["name"]),
        provisional=tuple(data.get("provisional", {}).items()),
        tiles=tiles,
        counts=counts,
        falcon_tiles=falcon,
        boards=boards,
        track=TrackDef(track["length"], towers, gates),
        wall_tiles=wall_kinds,
        wall_tile_copies=wall["copies"],
        followers_in_supply=data["components"]["followers_in_supply"],
        aerie_tokens=data["components"]["aerie_tokens"],
        source=data,
        by_id={t.id: t for t in (*tiles, *falcon)},
    )


def dataset_from_json(text: str) -> Dataset:
    """Parse and validate a dataset file's text (an operator's corrected file, for example)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError([Issue("dataset", "", f"is not valid JSON: {exc}")]) from exc
    return parse_dataset(data)
