"""Carcassonne tile designs as data: the 72 base tiles (C2) and the 18 Inns & Cathedrals tiles.

One line per design, exactly as the rules file's tables (section 9 and 10) give them::

    id  count  ports (Nw N Ne  En E Es  Se S Sw  Ws W Wn)  | facts

Port tokens: an upper-case letter is a city segment, a lower-case letter a road segment, a digit
a field segment (same token = same segment). Facts: ``A+pennant``, ``r+inn``, ``A+cathedral``
(attributes), ``1>AB`` (field 1 touches cities A and B on this tile), ``monastery`` (a port-less
monastery segment), and a digit that appears in no port is a port-less field (the inner field of
I&C tile H). The two port-less segments carry a ``name`` attribute (``monastery``,
``inner_field``): clients name them so (see :mod:`games.tileboard.spots`).

Tile ids are the Wikicarpedia letters ``A``..``X`` and ``IC-A``..``IC-Q`` (``IC-K`` twice).
The junction tile IC-C carries its inn on the east leg only (the rules file's recommended reading
of open question Q1); :data:`JUNCTION_INN_EAST_WEST` is the other reading (east and west legs).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from games.draw import canonical
from games.tileboard import Segment, Tile, design_key, parse_ports

__all__ = [
    "BASE_TABLE",
    "CITY",
    "FIELD",
    "INNER_FIELD",
    "INNS_CATHEDRALS_TABLE",
    "MONASTERY",
    "ROAD",
    "START_TILE",
    "TileSet",
    "format_tile",
    "parse_table",
    "parse_tile",
    "tile_set",
]

CITY, ROAD, FIELD, MONASTERY = "city", "road", "field", "monastery"
INNER_FIELD = "inner_field"
"""The name of a field without ports (I&C tile H); a monastery is named ``monastery``."""
START_TILE = "D"
"""The start tile is one of the four D tiles; it lies at (0, 0), rotation 0, before any draw."""

BASE_TABLE = """
A  2  111 111 1r1 111  | monastery
B  4  111 111 111 111  | monastery
C  1  AAA AAA AAA AAA  | A+pennant
D  4  AAA 1r2 222 2r1  | 1>A
E  5  AAA 111 111 111  | 1>A
F  2  111 AAA 222 AAA  | A+pennant 1>A 2>A
G  1  111 AAA 222 AAA  | 1>A 2>A
H  3  111 AAA 111 BBB  | 1>AB
I  2  AAA BBB 111 111  | 1>AB
J  3  AAA 1r2 2r1 111  | 1>A
K  3  AAA 111 1r2 2r1  | 1>A
L  3  AAA 1r2 2s3 3t1  | 1>A
M  2  AAA 111 111 AAA  | A+pennant 1>A
N  3  AAA 111 111 AAA  | 1>A
O  2  AAA 1r2 2r1 AAA  | A+pennant 1>A
P  3  AAA 1r2 2r1 AAA  | 1>A
Q  1  AAA AAA 111 AAA  | A+pennant 1>A
R  3  AAA AAA 111 AAA  | 1>A
S  2  AAA AAA 1r2 AAA  | A+pennant 1>A 2>A
T  1  AAA AAA 1r2 AAA  | 1>A 2>A
U  8  1r2 222 2r1 111  |
V  9  111 111 1r2 2r1  |
W  4  111 1r2 2s3 3t1  |
X  1  1r2 2s3 3t4 4u1  |
"""

INNS_CATHEDRALS_TABLE = """
IC-A  1  111 111 1r2 2r1  | r+inn
IC-B  1  111 1r2 222 2r1  | r+inn
IC-C  1  111 1r2 2s3 3t1  | r+inn
IC-D  1  111 1r2 222 2s1  | monastery
IC-E  1  1r2 2s3 3s2 2r1  |
IC-F  1  AAA 1r2 222 AAA  | 1>A 2>A
IC-G  1  111 222 222 AAA  | 1>A 2>A
IC-H  1  AAA BBB CCC DDD  | 5>ABCD
IC-I  1  AAA 1r2 BBB 3s4  | 1>A 2>B 3>B 4>A
IC-J  1  AAA 111 1r2 222  | 1>A 2>A
IC-K  2  AAA AAA AAA AAA  | A+cathedral
IC-L  1  AAA 1r2 2r1 AAA  | A+pennant r+inn 1>A
IC-M  1  AAA 111 1r2 2r1  | r+inn 1>A
IC-N  1  AAA 111 1r2 AAA  | r+inn 1>A 2>A
IC-O  1  AAA BBB 111 CCC  | 1>ABC
IC-P  1  AAA 111 BBB AAA  | A+pennant 1>AB
IC-Q  1  1r2 AAA 3s4 AAA  | A+pennant 1>A 2>A 3>A 4>A
"""

JUNCTION_INN_EAST_WEST = "IC-C  1  111 1r2 2s3 3t1  | r+inn t+inn"
"""IC-C with the inn on the east and the west leg (option ``junction_inn = "east_west"``)."""


def _kind_of(token: str) -> str:
    if token.isdigit():
        return FIELD
    return CITY if token.isupper() else ROAD


def parse_tile(line: str) -> tuple[Tile, int]:
    """One table line -> (tile, count).

    >>> tile, count = parse_tile("D  4  AAA 1r2 222 2r1  | 1>A")
    >>> tile.id, count, [(s.token, s.kind) for s in tile.segments]
    ('D', 4, [('A', 'city'), ('1', 'field'), ('r', 'road'), ('2', 'field')])
    """
    spec, _, facts = line.partition("|")
    parts = spec.split()
    tile_id, count, ports = parts[0], int(parts[1]), " ".join(parts[2:])
    tokens = parse_ports(ports)
    attrs: dict[str, list[tuple[str, object]]] = {}
    touches: dict[str, str] = {}
    extra_segments: dict[str, Segment] = {}
    for fact in facts.split():
        if fact == MONASTERY:
            extra_segments["m"] = Segment(MONASTERY, (("name", MONASTERY),))
        elif "+" in fact:
            token, attr = fact.split("+")
            attrs.setdefault(token, []).append((attr, True))
        elif ">" in fact:
            token, cities = fact.split(">")
            touches[token] = cities
            if token not in tokens:
                extra_segments[token] = Segment(FIELD, (("name", INNER_FIELD),))
        else:
            raise ValueError(f"tile {tile_id}: unknown fact {fact!r}")
    segments: dict[str, Segment] = {}
    for token in tokens:
        if token not in segments:
            segments[token] = Segment(_kind_of(token), tuple(attrs.get(token, ())))
    segments.update(extra_segments)
    return Tile.from_tokens(tile_id, ports, segments, touches=touches), count


def format_tile(tile: Tile, count: int) -> str:
    """The table line of a tile design; ``parse_tile(format_tile(t, n))`` rebuilds it.

    >>> format_tile(*parse_tile("IC-L 1 AAA 1r2 2r1 AAA | A+pennant r+inn 1>A"))
    'IC-L  1  AAA 1r2 2r1 AAA  | A+pennant r+inn 1>A'
    """
    tokens = "".join(tile.segments[s].token if s is not None else "." for s in tile.ports)
    ports = " ".join(tokens[i : i + 3] for i in range(0, 12, 3))
    facts = []
    for seg in tile.segments:
        if seg.kind == MONASTERY:
            facts.append(MONASTERY)
    for seg in tile.segments:
        facts.extend(f"{seg.token}+{name}" for name, value in seg.attrs if value is True)
    for seg in tile.segments:
        if seg.touches:
            facts.append(seg.token + ">" + "".join(tile.segments[t].token for t in seg.touches))
    return f"{tile.id}  {count}  {ports}  | {' '.join(facts)}".rstrip()


def parse_table(table: str) -> list[tuple[Tile, int]]:
    return [parse_tile(line) for line in table.strip().splitlines() if line.strip()]


class TileSet:
    """The designs and counts of one game configuration, in a stable order. Each design is
    listed once (two ids for one design up to rotation is a data error: ``ValueError``)."""

    def __init__(self, rows: list[tuple[Tile, int]]) -> None:
        designs: dict[frozenset[tuple[Hashable, ...]], str] = {}
        for tile, _ in rows:
            other = designs.setdefault(design_key(tile), tile.id)
            if other != tile.id:
                raise ValueError(f"tile {tile.id} is the same design as {other}; list it once with its count")
        self.tiles: Mapping[str, Tile] = {tile.id: tile for tile, _ in rows}
        self.counts: Mapping[str, int] = {tile.id: count for tile, count in rows}
        self.ids: tuple[str, ...] = tuple(tile.id for tile, _ in rows)
        self.pile: tuple[str, ...] = canonical(self.pile_counts().items()) if START_TILE in self.counts else ()
        """The draw pile as it is dealt (``donjon-draw-2``): every tile of :meth:`pile_counts`, ids sorted."""

    def pile_counts(self) -> dict[str, int]:
        """Counts of the draw pile: the box minus the start tile."""
        counts = dict(self.counts)
        counts[START_TILE] -= 1
        return counts


_BASE = parse_table(BASE_TABLE)
_IC = parse_table(INNS_CATHEDRALS_TABLE)
_IC_EW = [parse_tile(JUNCTION_INN_EAST_WEST) if tile.id == "IC-C" else (tile, n) for tile, n in _IC]

_SETS = {
    (False, "east"): TileSet(_BASE),
    (False, "east_west"): TileSet(_BASE),
    (True, "east"): TileSet(_BASE + _IC),
    (True, "east_west"): TileSet(_BASE + _IC_EW),
}


def tile_set(inns_cathedrals: bool, junction_inn: str = "east") -> TileSet:
    """The tile set of a configuration (shared, read-only)."""
    return _SETS[(inns_cathedrals, junction_inn)]
