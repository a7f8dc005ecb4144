"""The dataset file: the shipped provisional data is valid and respects every known fact; a
broken file is refused with one error naming every problem."""

from __future__ import annotations

import copy
import json

import pytest

from games.castle import (
    ENGINE,
    DatasetError,
    engine_from_json,
    shipped_dataset_text,
    validate,
)
from games.castle.data import EXPECTED, Kind, WallEffect, dataset_from_json

SHIPPED = json.loads(shipped_dataset_text())


def test_shipped_dataset_is_valid():
    assert validate(SHIPPED) == []


def test_shipped_dataset_respects_the_known_counts():
    data = ENGINE.dataset
    assert sum(data.counts[t.id] for t in data.tiles) == 60
    assert len(data.falcon_tiles) == 18 and all(data.counts[t.id] == 1 for t in data.falcon_tiles)
    assert len(data.boards["base"].interior) == 76
    base_starts = data.boards["base"].start_spaces
    falcon_starts = data.boards["falcon"].start_spaces
    assert (len(base_starts), len(falcon_starts), sum(s.gate for s in falcon_starts)) == (7, 9, 2)
    assert len(data.track.towers) == 14
    assert [t.spaces for t in data.track.towers if not t.token] == [(0, 1)]
    assert data.track.towers[1].spaces == (12, 13) and data.track.towers[1].token
    assert data.track.gates == ((27, 28), (47, 48), (69, 70), (91, 92))
    assert (len(data.wall_tiles), data.wall_tile_copies, data.aerie_tokens, data.followers_in_supply) == (9, 2, 12, 6)


def test_large_court_counts_the_market_printed_on_a_start_space():
    starts = ENGINE.dataset.boards["base"].start_spaces
    with_market = [s.id for s in starts if any(seg.attr("markets") for seg in s.tile.segments)]
    assert with_market == ["S2"]
    tiles = ENGINE.dataset.tiles
    markets = sum(ENGINE.dataset.counts[t.id] * sum(seg.attr("markets", 0) for seg in t.segments) for t in tiles)
    assert markets + 1 >= 5


def test_wall_tiles_are_effects_with_both_numberings():
    by_name = {k.name: k for k in ENGINE.dataset.wall_tiles}
    assert by_name["extra_turn"].effect is WallEffect.EXTRA_TURN
    assert (by_name["extra_turn"].original, by_name["extra_turn"].polish) == (1, 1)
    assert (by_name["market_four"].original, by_name["market_four"].polish) == (7, 4)
    assert by_name["market_four"].points == 4
    assert by_name["double_house"].feature is Kind.HOUSE
    assert sorted(k.original for k in by_name.values()) == list(range(1, 10))
    assert sorted(k.polish for k in by_name.values()) == list(range(1, 10))


def test_broken_dataset_names_every_problem_at_once():
    data = copy.deepcopy(SHIPPED)
    data["tiles"][0]["count"] = 5  # 59 tiles
    data["tiles"][1]["ports"] = "cph hhh hpc cc"  # 11 tokens
    data["tiles"][2]["segments"]["p"]["kind"] = "road"
    data["tiles"][3]["ports"] = "pcd ddd dpc ccc"  # a path on the Nw half
    data["falcon_tiles"][1] = dict(data["falcon_tiles"][0], id="F02")  # a duplicate Falcon tile
    data["boards"]["base"]["interior"][3] = "#########."  # 75 spaces
    data["track"]["towers"][0]["token"] = True
    data["wall_tiles"]["numbering"]["polish"]["9"] = "extra_turn"
    issues = validate(data)
    text = [str(i) for i in issues]
    expected = [
        "tiles: count: the counts add up to 59, the game has 60 tiles",
        "tiles[1] (B02): ports: must be a string of 12 port tokens, got 'cph hhh hpc cc'",
        "tiles[2] (B03) segment 'p': kind: 'road' is not one of path, house, tower, court, chapel",
        "tiles[3] (B04) segment 'p': ports: a path may only use the middle ports N E S W, not Nw",
        "falcon_tiles[1] (F02): is the same tile as F01 (the 18 Falcon tiles are all different)",
        "boards.base: interior: has 75 tile spaces, the castle has 76",
        "track.towers[0]: token: tower 0/1 never holds a wall tile",
        "track: towers: 14 towers hold a wall tile, the game puts one on 13",
        "wall_tiles.numbering.polish: kind 'extra_turn' is numbered 2 times, expected once",
        "wall_tiles.numbering.polish: kind 'keep_bonus' is numbered 0 times, expected once",
    ]
    for line in expected:
        assert line in text, line
    with pytest.raises(DatasetError) as err:
        dataset_from_json(json.dumps(data))
    message = str(err.value)
    assert message.startswith(f"castle-v1 has {len(issues)} problem(s):")
    assert "tiles[2] (B03) segment 'p': kind: 'road' is not one of" in message
    assert len(err.value.issues) == len(issues) >= len(expected)


def test_start_spaces_must_lie_on_the_wall_facing_the_interior():
    data = copy.deepcopy(SHIPPED)
    data["boards"]["base"]["start_spaces"][0].update(x=2, y=0)
    data["boards"]["base"]["start_spaces"][1].update(x=20, y=20)
    data["boards"]["base"]["start_spaces"][2]["ports"] = "--- cpd --- cpd"
    text = [str(i) for i in validate(data)]
    assert "boards.base start_spaces[0] (S1): x/y: (2, 0) is inside the castle; a start space lies on the wall" in text
    assert "boards.base start_spaces[1] (S2): x/y: (20, 20) does not touch the interior along an edge" in text
    assert "boards.base start_spaces[2] (S3): ports: side E faces the wall; its ports must be '-'" in text


def test_a_path_with_one_port_must_end_at_a_square():
    data = copy.deepcopy(SHIPPED)
    del data["tiles"][12]["segments"]["p"]["end"]
    data["tiles"][0]["segments"]["p"]["end"] = "square"
    text = [str(i) for i in validate(data)]
    assert "tiles[12] (B13) segment 'p': end: a path with one port must end at a 'square', got None" in text
    assert "tiles[0] (B01) segment 'p': end: only a path with one port has an end, got 'square'" in text


def test_unknown_fields_and_wrong_schema_are_reported():
    data = copy.deepcopy(SHIPPED)
    data["schema"] = 2
    data["colour"] = "red"
    data["falcon_tiles"][0]["segments"]["k"]["glow"] = True
    data["tiles"][0]["segments"]["p"]["aeries"] = 1
    text = [str(i) for i in validate(data)]
    assert "dataset: schema: is 2; this engine reads schema 1" in text
    assert any(t.startswith("dataset: colour: unknown field") for t in text)
    assert any(t.startswith("falcon_tiles[0] (F01) segment 'k': glow: unknown field") for t in text)
    assert "tiles[0] (B01) segment 'p': aeries: aeries are only on Falcon tiles" in text


def test_invalid_json_is_a_dataset_error():
    with pytest.raises(DatasetError, match="is not valid JSON"):
        dataset_from_json("{")


def test_operator_can_supply_a_corrected_file():
    data = copy.deepcopy(SHIPPED)
    data["name"] = "castle-operator"
    data["wall_tiles"]["kinds"]["flat_points"]["points"] = 7
    data["provisional"] = {}
    engine = engine_from_json(json.dumps(data))
    entry = engine.catalog_entry()
    assert entry["dataset"] == "castle-operator"
    assert entry["provisional"] == ""
    assert {"tile": "flat_points", "effect": "flat_points", "original": 9, "polish": 8, "points": 7} in entry["wall_tiles"]


def test_catalog_entry_says_which_data_is_provisional():
    entry = ENGINE.catalog_entry()
    assert entry["id"] == "castle" and (entry["min_seats"], entry["max_seats"]) == (2, 2)
    assert set(entry["options"]) == {"falcon", "ties", "halt_at_gates", "tile_order"}
    assert entry["options"]["falcon"]["default"] is False
    for part in ("tiles", "falcon_tiles", "interior", "start_spaces", "towers", "wall_tile_values"):
        assert part in entry["provisional"]
        assert part in entry["provisional_parts"]


def test_expected_facts_are_the_rulebook_numbers():
    assert (EXPECTED["base_tiles"], EXPECTED["falcon_tiles"], EXPECTED["interior"]) == (60, 18, 76)


def test_start_space_ids_differ_from_tile_ids():
    data = copy.deepcopy(SHIPPED)
    data["boards"]["base"]["start_spaces"][0]["id"] = "B01"
    assert "boards.base start_spaces[0] (B01): id: is also the id of a castle tile" in [str(i) for i in validate(data)]


def test_a_falcon_tile_turned_and_relettered_is_still_the_same_tile():
    data = copy.deepcopy(SHIPPED)
    # F01 ("kkk ccc ccc ccc", chapel part north) turned a quarter, with other tokens.
    data["falcon_tiles"][1] = {"id": "F02", "count": 1, "ports": "xxx yyy xxx xxx",
                               "segments": {"y": {"kind": "chapel"}, "x": {"kind": "court"}}}
    assert [str(i) for i in validate(data)] == [
        "falcon_tiles[1] (F02): is the same tile as F01 (the 18 Falcon tiles are all different)"]
    data["falcon_tiles"][1]["segments"]["y"]["aeries"] = 1  # the shipped F02 (an aerie), turned
    assert validate(data) == []


def test_catalog_entry_names_tile_order_as_secret():
    entry = ENGINE.catalog_entry()
    assert ENGINE.secret_options == frozenset({"tile_order"})
    assert entry["secret_options"] == ["tile_order"]
    assert entry["notes"] == ["Option tile_order is secret: keep it out of anything sent to clients."]
    assert entry["options"]["tile_order"]["items"] == "tile ids"
    json.dumps(entry)


def test_tile_and_start_space_ids_are_checked_alike():
    data = copy.deepcopy(SHIPPED)
    data["tiles"][1]["id"] = "B01"
    data["tiles"][2]["id"] = "bad id!"
    data["tiles"][3] = 3
    data["boards"]["base"]["start_spaces"][1]["id"] = "S1"
    data["boards"]["base"]["start_spaces"][2]["id"] = 7
    data["boards"]["base"]["start_spaces"][3]["id"] = "7"  # 7 above is no id, so no repeat of it
    data["boards"]["falcon"]["start_spaces"][0]["zz"] = 1
    text = [str(i) for i in validate(data)]
    assert [t for t in text if t.startswith(("tiles[", "boards.base start_spaces[", "boards.falcon start_spaces["))] == [
        "tiles[1] (B01): id: 'B01' is used twice",
        "tiles[2] (bad id!): id: must be 1-16 letters, digits, '-' or '_', got 'bad id!'",
        "tiles[3]: must be an object",
        "boards.base start_spaces[1] (S1): id: 'S1' is used twice",
        "boards.base start_spaces[2] (7): id: must be 1-16 letters, digits, '-' or '_', got 7",
        "boards.falcon start_spaces[0] (S1): zz: unknown field (allowed: gate, id, note, ports, segments, x, y)",
    ]
