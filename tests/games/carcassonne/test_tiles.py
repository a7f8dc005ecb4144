"""The tile tables of the rules file (sections 9 and 10), as data."""

from __future__ import annotations

import pytest

from games.carcassonne.tiles import (
    BASE_TABLE,
    INNS_CATHEDRALS_TABLE,
    TileSet,
    format_tile,
    parse_table,
    parse_tile,
    tile_set,
)

# The "N E S W" column of the rules file's tables, independent of the port strings.
EDGES = {
    "A": "FFRF", "B": "FFFF", "C": "CCCC", "D": "CRFR", "E": "CFFF", "F": "FCFC", "G": "FCFC", "H": "FCFC",
    "I": "CCFF", "J": "CRRF", "K": "CFRR", "L": "CRRR", "M": "CFFC", "N": "CFFC", "O": "CRRC", "P": "CRRC",
    "Q": "CCFC", "R": "CCFC", "S": "CCRC", "T": "CCRC", "U": "RFRF", "V": "FFRR", "W": "FRRR", "X": "RRRR",
    "IC-A": "FFRR", "IC-B": "FRFR", "IC-C": "FRRR", "IC-D": "FRFR", "IC-E": "RRRR", "IC-F": "CRFC",
    "IC-G": "FFFC", "IC-H": "CCCC", "IC-I": "CRCR", "IC-J": "CFRF", "IC-K": "CCCC", "IC-L": "CRRC",
    "IC-M": "CFRR", "IC-N": "CFRC", "IC-O": "CCFC", "IC-P": "CFCC", "IC-Q": "RCRC",
}
LETTER = {"city": "C", "road": "R", "field": "F"}


def _with(tiles, attr):
    return sorted(t.id for t in tiles.values() if any(s.attr(attr) for s in t.segments))


def test_counts_72_base_and_90_with_the_expansion():
    assert sum(tile_set(False).counts.values()) == 72
    assert sum(tile_set(True).counts.values()) == 90
    assert len(tile_set(True).ids) == 24 + 17
    assert tile_set(True).counts["IC-K"] == 2
    assert sum(tile_set(False).pile_counts().values()) == 71


def test_edges_column_agrees_with_the_port_strings():
    tiles = tile_set(True).tiles
    got = {tid: "".join(LETTER[t.side_kinds[0][s][1]] for s in range(4)) for tid, t in tiles.items()}
    assert got == EDGES


def test_sides_are_whole_city_whole_field_or_road_between_fields():
    for tile in tile_set(True).tiles.values():
        for left, middle, right in tile.side_kinds[0]:
            if middle == "road":
                assert left == right == "field", tile.id
            else:
                assert left == middle == right, tile.id


def test_special_features_of_both_sets():
    base, full = tile_set(False), tile_set(True)
    pennant_tiles = sum(base.counts[t] for t in _with(base.tiles, "pennant"))
    assert pennant_tiles == 10
    monastery_tiles = [t.id for t in full.tiles.values() if any(s.kind == "monastery" for s in t.segments)]
    assert monastery_tiles == ["A", "B", "IC-D"]
    assert _with(full.tiles, "inn") == ["IC-A", "IC-B", "IC-C", "IC-L", "IC-M", "IC-N"]
    assert _with(full.tiles, "cathedral") == ["IC-K"]
    assert [t for t in _with(full.tiles, "pennant") if t.startswith("IC")] == ["IC-L", "IC-P", "IC-Q"]


def test_inner_field_of_ic_h_has_no_port_and_touches_four_caps():
    h = tile_set(True).tiles["IC-H"]
    (inner,) = h.portless_segments()
    assert h.segments[inner].kind == "field"
    assert sorted(h.segments[i].token for i in h.segments[inner].touches) == ["A", "B", "C", "D"]


def test_arrow_tile_keeps_the_north_strip_apart():
    g = tile_set(True).tiles["IC-G"]
    assert g.ports[0:3] != g.ports[3:6]
    assert [s.token for s in g.segments] == ["1", "2", "A"]


def test_crossing_tile_has_two_roads_and_four_fields():
    i = tile_set(True).tiles["IC-I"]
    kinds = sorted(s.kind for s in i.segments)
    assert kinds == ["city", "city", "field", "field", "field", "field", "road", "road"]


def test_junction_inn_option_adds_the_west_leg():
    east = tile_set(True, "east").tiles["IC-C"]
    both = tile_set(True, "east_west").tiles["IC-C"]
    assert [s.token for s in east.segments if s.attr("inn")] == ["r"]
    assert [s.token for s in both.segments if s.attr("inn")] == ["r", "t"]


@pytest.mark.parametrize("line", [ln for ln in (BASE_TABLE + INNS_CATHEDRALS_TABLE).splitlines() if ln.strip()])
def test_table_line_round_trips(line):
    assert format_tile(*parse_tile(line)).split() == line.split()


def test_parse_table_reads_every_line():
    assert len(parse_table(BASE_TABLE)) == 24 and len(parse_table(INNS_CATHEDRALS_TABLE)) == 17


def test_a_design_listed_under_two_ids_is_refused():
    rows = parse_table("""
    D   3  AAA 1r2 222 2r1  | 1>A
    D2  1  2r1 AAA 1r2 222  | 1>A
    """)
    with pytest.raises(ValueError, match="tile D2 is the same design as D"):
        TileSet(rows)


def test_portless_segments_are_named_as_clients_name_them():
    tiles = tile_set(True).tiles
    assert [s.attr("name") for s in tiles["B"].segments if s.attr("name") is not None] == ["monastery"]
    h = tiles["IC-H"]
    (inner,) = h.portless_segments()
    assert h.segments[inner].attr("name") == "inner_field"
