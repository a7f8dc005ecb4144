"""What a client needs to draw Carcassonne tiles, built from :mod:`games.carcassonne.tiles`.

``assets()`` is served by ``GET /games/catalog/carcassonne/assets`` (docs/protocol.md): every tile
design of the base game and of Inns & Cathedrals under the default reading, and under
``variants`` the designs an option value replaces (the junction tile IC-C of
``junction_inn = "east_west"``).
"""

from __future__ import annotations

from typing import Any

from games.carcassonne.tiles import START_TILE, tile_set
from games.tileboard.assets import PORT_NAMES, tile_geometry

__all__ = ["assets"]


def assets() -> dict[str, Any]:
    default = tile_set(True, "east")
    other = tile_set(True, "east_west")
    replaced = {tid: tile_geometry(other.tiles[tid]) for tid in other.ids if other.tiles[tid] is not default.tiles[tid]}
    return {
        "game": "carcassonne",
        "ports": list(PORT_NAMES),
        "start_tile": START_TILE,
        "tiles": {tid: tile_geometry(default.tiles[tid]) for tid in default.ids},
        "variants": {"junction_inn": {"east_west": replaced}},
    }
