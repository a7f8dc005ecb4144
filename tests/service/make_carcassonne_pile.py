"""Writes ``clients/js/src/carcassonne-pile.js``: Carcassonne's draw pile (tile ids in the rules'
fixed order, with their counts, start tile taken out) for each tile set, which the JavaScript
verifier walks to re-run every tile draw. ``tests/service/test_verify.py`` checks it is current.

    python -m tests.service.make_carcassonne_pile
"""

from __future__ import annotations

import json
from pathlib import Path

from games.carcassonne.tiles import tile_set

OUT = Path(__file__).resolve().parents[2] / "clients" / "js" / "src" / "carcassonne-pile.js"


def piles() -> dict[str, list[list[object]]]:
    out = {}
    for name, inns in (("base", False), ("inns_cathedrals", True)):
        tiles = tile_set(inns)
        counts = tiles.pile_counts()
        out[name] = [[tile_id, counts[tile_id]] for tile_id in tiles.ids]
    return out


def source() -> str:
    return (
        "// Carcassonne's draw pile per tile set: [tile id, count] in the rules' fixed order, the start\n"
        "// tile taken out. Written by `python -m tests.service.make_carcassonne_pile`; do not edit.\n"
        f"export const CARCASSONNE_PILES = Object.freeze({json.dumps(piles(), separators=(',', ':'))});\n"
    )


if __name__ == "__main__":
    OUT.write_text(source(), encoding="utf-8")
    print(f"wrote {OUT}")
