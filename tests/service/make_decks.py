"""The decks of every game as ``docs/fairness.md`` (The deal of each game) lists them, from the
rules: writes ``clients/js/src/decks.js``, the tables the JavaScript verifier deals from, and
renders the page's lines, which ``tests/service/test_verify.py`` finds in the page (so the page,
the rules and the second verifier cannot drift apart). Also the page's donjon-draw-2 test vectors.

    python -m tests.service.make_decks
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from games.carcassonne.tiles import START_TILE, tile_set
from games.castle import ENGINE as CASTLE
from games.castle.scoring import WALL_TILES
from games.castle_panic.data import (
    ALL_CARDS,
    ALL_TOKENS,
    CARD_TABLE,
    EASIER_BATTLES_REMOVED,
    SETUP_MONSTERS,
    TOKEN_TABLE,
)
from games.castle_panic.rules import CARDS, DIE, SETUP_ARCS, TOKENS
from games.draw import Dealer
from games.tileboard import TILES

OUT = Path(__file__).resolve().parents[2] / "clients" / "js" / "src" / "decks.js"
VECTOR_SEED = bytes(range(32))
VECTOR_GAME = "g1"


def decks() -> dict[str, Any]:
    """Every deck's ``[id, count]`` pairs, in the rules' order (what ``donjon-draw-1`` walks)."""
    base, inns = tile_set(False), tile_set(True)
    castle = CASTLE
    data = castle.dataset
    return {
        "carcassonne": {
            "start": START_TILE,
            "base": [[tid, base.pile_counts()[tid]] for tid in base.ids],
            "inns_cathedrals": [[tid, inns.pile_counts()[tid]] for tid in inns.ids],
        },
        "castle": {
            data.name: {
                "tiles": [[t.id, data.counts[t.id]] for t in castle.tile_set(False)],
                "falcon_tiles": [[t.id, data.counts[t.id]] for t in data.falcon_tiles],
                "wall_tiles": [[k.name, data.wall_tile_copies] for k in data.wall_tiles],
            }
        },
        "castle_panic": {
            "cards": [[k.name, k.count] for k in CARD_TABLE],
            "tokens": [[k.name, k.count] for k in TOKEN_TABLE],
            "setup_monsters": list(SETUP_MONSTERS),
            "easier_battles_removed": [list(pair) for pair in EASIER_BATTLES_REMOVED],
        },
    }


def source() -> str:
    return (
        "// Every game's decks as docs/fairness.md (The deal of each game) lists them: [id, count] pairs in\n"
        "// the rules' order (donjon-draw-1 walks them so; donjon-draw-2 deals them sorted). Written by\n"
        "// `python -m tests.service.make_decks` from the rules; do not edit.\n"
        f"export const DECKS = Object.freeze({json.dumps(decks(), separators=(',', ':'))});\n"
    )


def _pairs(pairs: list[list[Any]]) -> str:
    return ", ".join(f"`{name}` {count}" for name, count in pairs)


def doc_lines() -> dict[str, str]:
    """The page's placeholders and what each says."""
    d = decks()
    base = d["carcassonne"]["base"]
    inns = d["carcassonne"]["inns_cathedrals"][len(base):]
    castle = d["castle"][CASTLE.dataset.name]
    panic = d["castle_panic"]
    return {
        "CARCASSONNE_BASE": _pairs(base) + " (`D` 4 in the box, one the start tile).",
        "CARCASSONNE_IC": _pairs(inns) + ".",
        "CASTLE_BASE": _pairs(castle["tiles"]),
        "CASTLE_FALCON": _pairs(castle["falcon_tiles"]),
        "CASTLE_WALL": ", ".join(f"`{name}`" for name, _ in sorted(castle["wall_tiles"])),
        "CASTLE_WALL_ORDER": ", ".join(f"`{name}`" for name, _ in castle["wall_tiles"]),
        "TOKENS": _pairs(panic["tokens"]),
        "EASIER_BATTLES": _pairs(panic["easier_battles_removed"]),
        "CARDS": _pairs(panic["cards"]),
        "DEAL_VECTORS": vector_table(),
    }


def digest(order: Any) -> str:
    return hashlib.sha256(",".join(map(str, order)).encode()).hexdigest()


def vectors() -> list[tuple[str, str, Any]]:
    """(what, call, result) of the page's donjon-draw-2 test vectors."""
    dealer = Dealer(VECTOR_SEED, VECTOR_GAME)
    castle = CASTLE
    tokens = tuple(t for t in ALL_TOKENS if t not in SETUP_MONSTERS)
    rows: list[tuple[str, str, Any]] = []
    for what, deck, contents in (
        ("Carcassonne", TILES, tile_set(False).pile),
        ("Carcassonne, `inns_cathedrals`", TILES, tile_set(True).pile),
        ("The Castle", TILES, castle.pile(False)),
        ("The Castle, `falcon`", TILES, castle.pile(True)),
        ("The Castle", WALL_TILES, castle.wall_tiles),
        ("Castle Panic", TOKENS, tokens),
        ("Castle Panic", CARDS, ALL_CARDS),
    ):
        order = dealer.deal(deck, 0, contents)
        shown = ", ".join(f"`{item}`" for item in order[:6])
        rows.append((what, f"deal `{deck}` 0 ({len(contents)})", f"{shown}, ...; digest `{digest(order)}`"))
    rows.append(("Castle Panic", f"deal `{SETUP_ARCS}` 0", f"`{list(dealer.deal(SETUP_ARCS, 0, (1, 2, 3, 4, 5, 6)))}`"))
    ten = ALL_CARDS[:10]
    order = dealer.deal(CARDS, 1, ten)
    rows.append(("Castle Panic", "deal `cards` 1 of the first 10 cards sorted",
                 ", ".join(f"`{item}`" for item in order[:4]) + f", ...; digest `{digest(order)}`"))
    rolls = [dealer.stream(DIE, n).randint(1, 6) for n in range(8)]
    rows.append(("Castle Panic", "rolls 0 to 7 (`randint(1, 6)` on `g1:die`, n)", f"`{rolls}`"))
    bot = [dealer.stream("bot:1", n).below(100) for n in range(4)]
    rows.append(("a bot", "`below(100)` on `g1:bot:1`, numbers 0 to 3 (one each)", f"`{bot}`"))
    rows.append(("secret options", "`secret_salt()`", f"`{dealer.secret_salt()}`"))
    return rows


def vector_table() -> str:
    lines = ["| game | deal or draw | result |", "|---|---|---|"]
    lines += [f"| {what} | {call} | {result} |" for what, call, result in vectors()]
    return "\n".join(lines)


if __name__ == "__main__":
    OUT.write_text(source(), encoding="utf-8")
    print(f"wrote {OUT}")
