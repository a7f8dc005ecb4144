"""Tile designs as JSON-safe data for clients that draw them (the web app's boards).

A drawn tile must come from the same data the rules use, so clients get each :class:`Tile` as
its twelve ports and its segments, never a copy maintained by hand:

``{"id": "D", "ports": [0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 2, 1], "segments": [{"kind": "city",
"token": "A", "attrs": {}, "touches": []}, ...]}``

``ports[p]`` is the index of the segment at port ``p`` (``Nw N Ne En E Es Se S Sw Ws W Wn``) of the
tile as printed (rotation 0), or ``None``; a rotation ``r`` moves port ``p`` to ``(p + 3 * r / 90) % 12``.
"""

from __future__ import annotations

from typing import Any

from games.tileboard.tiles import PORT_NAMES, Tile

__all__ = ["PORT_NAMES", "tile_geometry"]


def tile_geometry(tile: Tile) -> dict[str, Any]:
    """One tile design as plain data (see the module docstring)."""
    return {
        "id": tile.id,
        "ports": list(tile.ports),
        "segments": [
            {"kind": seg.kind, "token": seg.token, "attrs": dict(seg.attrs), "touches": list(seg.touches)}
            for seg in tile.segments
        ],
    }
