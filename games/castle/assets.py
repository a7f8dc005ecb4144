"""What a client needs to draw The Castle, built from a loaded :class:`Dataset`.

Served by ``GET /games/catalog/castle/assets`` (docs/protocol.md) for the dataset the service plays
(the shipped one, or the operator's ``DONJON_CASTLE_DATA``): every castle tile design (base and
Falcon) and, per board (``base``, ``falcon``), the start spaces printed on the wall with their
ports. Views already carry the interior, the start spaces' positions, the towers and the gates.
"""

from __future__ import annotations

from typing import Any

from games.castle.data import Dataset
from games.tileboard.assets import PORT_NAMES, tile_geometry

__all__ = ["assets"]


def assets(dataset: Dataset) -> dict[str, Any]:
    return {
        "game": "castle",
        "dataset": dataset.name,
        "ports": list(PORT_NAMES),
        "tiles": {tile.id: tile_geometry(tile) for tile in dataset.tiles + dataset.falcon_tiles},
        "start_spaces": {
            key: [
                {"id": s.id, "x": s.x, "y": s.y, "gate": s.gate, "tile": tile_geometry(s.tile)}
                for s in shape.start_spaces
            ]
            for key, shape in dataset.boards.items()
        },
        "track_length": dataset.track.length,
    }
