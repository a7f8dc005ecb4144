"""Validation of a Castle dataset file's JSON (see :mod:`games.castle.data` for the format): every
problem at once, as :class:`~games.castle.dataset.Issue` values naming the entry and the field."""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import Any

from games.castle.dataset import EXPECTED, SCHEMA, Cell, Issue, Kind, WallEffect, build_tile
from games.tileboard import MIDDLE_PORTS, PORT_NAMES, SIDE_OFFSETS, design_key

_TOP_KEYS = {"schema", "name", "title", "notation", "provisional", "components", "tiles",
             "falcon_tiles", "boards", "track", "wall_tiles"}
_TILE_KEYS = {"id", "count", "ports", "segments", "note"}
_START_KEYS = {"id", "x", "y", "ports", "segments", "note", "gate"}
_SEGMENT_KEYS = {"kind", "end", "fountain", "markets", "aeries", "name"}
_ID = re.compile(r"^[A-Za-z0-9_-]{1,16}$")
_AERIE_KINDS = {Kind.PATH, Kind.HOUSE, Kind.TOWER, Kind.CHAPEL}
_EFFECT_FEATURES = {
    WallEffect.DOUBLE: {Kind.HOUSE, Kind.TOWER},
    WallEffect.INCOMPLETE: {Kind.PATH, Kind.HOUSE, Kind.TOWER},
}
_EFFECT_POINTS = {WallEffect.MARKET_VALUE, WallEffect.KEEP_VALUE, WallEffect.FLAT_POINTS}


# --- validation -----------------------------------------------------------------------------


class Checker:
    """Collects issues; every check appends and carries on."""

    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def add(self, where: str, field: str, problem: str) -> None:
        self.issues.append(Issue(where, field, problem))

    def unknown_keys(self, where: str, entry: Mapping[str, Any], allowed: set[str]) -> None:
        for key in entry:
            if key not in allowed:
                self.add(where, str(key), f"unknown field (allowed: {', '.join(sorted(allowed))})")

    def identified_entry(self, where: str, entry: Any, allowed: set[str], seen: set[str]) -> str | None:
        """Check entry ``where`` of a list of objects with ids (``"tiles[3]"``): an object with
        only ``allowed`` keys and an id of the :data:`_ID` form that is not in ``seen`` (a new
        id is added to it). Returns where later issues of the entry go (``"tiles[3] (A07)"``),
        or ``None`` when it is not an object."""
        if not isinstance(entry, dict):
            self.add(where, "", "must be an object")
            return None
        entry_id = entry.get("id")
        where = f"{where} ({entry_id})"
        self.unknown_keys(where, entry, allowed)
        if not isinstance(entry_id, str) or not _ID.match(entry_id):
            self.add(where, "id", f"must be 1-16 letters, digits, '-' or '_', got {entry_id!r}")
        elif entry_id in seen:
            self.add(where, "id", f"{entry_id!r} is used twice")
        else:
            seen.add(entry_id)
        return where

    def int_field(
        self, where: str, entry: Mapping[str, Any], key: str, *, minimum: int = 0, required: bool = True
    ) -> int | None:
        value = entry.get(key)
        if value is None:
            if required:
                self.add(where, key, "missing")
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            self.add(where, key, f"must be an integer, got {value!r}")
            return None
        if value < minimum:
            self.add(where, key, f"must be at least {minimum}, got {value}")
            return None
        return value


def _port_tokens(ports: Any) -> list[str] | None:
    if not isinstance(ports, str):
        return None
    tokens = [ch for ch in ports if not ch.isspace()]
    return tokens if len(tokens) == 12 else None


def _check_piece(chk: Checker, where: str, entry: Mapping[str, Any], *, falcon: bool, start: bool) -> list[str] | None:
    """Port string and segments of a tile or a start space; returns the tokens when usable."""
    tokens = _port_tokens(entry.get("ports"))
    if tokens is None:
        chk.add(where, "ports", f"must be a string of 12 port tokens, got {entry.get('ports')!r}")
    segments = entry.get("segments")
    if not isinstance(segments, dict) or not segments:
        chk.add(where, "segments", "must be a non-empty object mapping each token to a segment")
        return None
    if tokens is None:
        return None
    for i, tok in enumerate(tokens):
        if tok == "-":
            if not start:
                chk.add(where, "ports", f"port {PORT_NAMES[i]} has no segment ('-' is for start spaces only)")
        elif not tok.isalnum():
            chk.add(where, "ports", f"port {PORT_NAMES[i]} has token {tok!r}; tokens are letters or digits")
        elif tok not in segments:
            chk.add(where, "ports", f"port {PORT_NAMES[i]} has token {tok!r} with no segment")
    for tok, seg in segments.items():
        _check_segment(chk, f"{where} segment {tok!r}", seg, [i for i, t in enumerate(tokens) if t == tok],
                       falcon=falcon, start=start)
    return tokens


def _check_segment(chk: Checker, swhere: str, seg: Any, ports: list[int], *, falcon: bool, start: bool) -> None:
    """One segment of a piece, ``ports`` the indexes of the ports its token is on."""
    if not isinstance(seg, dict):
        chk.add(swhere, "", "must be an object")
        return
    chk.unknown_keys(swhere, seg, _SEGMENT_KEYS)
    try:
        kind = Kind(seg.get("kind", ""))  # "" is no kind either: the same refusal
    except ValueError:
        chk.add(swhere, "kind", f"{seg.get('kind')!r} is not one of {', '.join(k.value for k in Kind)}")
        return
    name = seg.get("name")
    if not ports:
        if not isinstance(name, str) or not name or name in PORT_NAMES:
            chk.add(swhere, "name", "a segment without ports needs a name that is not a port name")
        if kind is Kind.PATH:
            chk.add(swhere, "kind", "a path must reach at least one tile edge")
    elif name is not None:
        chk.add(swhere, "name", "only a segment without ports has a name")
    if kind is Kind.PATH:
        off_middle = [PORT_NAMES[p] for p in ports if p not in MIDDLE_PORTS]
        if off_middle:
            chk.add(swhere, "ports", f"a path may only use the middle ports N E S W, not {' '.join(off_middle)}")
        end = seg.get("end")
        allowed_end = "start" if start else "square"
        if len(ports) == 1 and end != allowed_end:
            chk.add(swhere, "end", f"a path with one port must end at a {allowed_end!r}, got {end!r}")
        if len(ports) > 1 and end is not None:
            chk.add(swhere, "end", f"only a path with one port has an end, got {end!r}")
    elif "end" in seg:
        chk.add(swhere, "end", "only paths have an end")
    if "fountain" in seg and (kind is not Kind.PATH or not isinstance(seg["fountain"], bool)):
        chk.add(swhere, "fountain", "must be true/false and only on a path")
    if "markets" in seg:
        if kind is not Kind.COURT:
            chk.add(swhere, "markets", "markets are only in courts")
        chk.int_field(swhere, seg, "markets", minimum=1)
    if "aeries" in seg:
        if not falcon:
            chk.add(swhere, "aeries", "aeries are only on Falcon tiles")
        elif kind not in _AERIE_KINDS:
            chk.add(swhere, "aeries", f"an aerie cannot belong to a {kind.value}")
        chk.int_field(swhere, seg, "aeries", minimum=1)
    if kind is Kind.CHAPEL and not falcon:
        chk.add(swhere, "kind", "chapels are only on Falcon tiles")


def _check_tiles(chk: Checker, data: Mapping[str, Any], seen_ids: set[str]) -> None:
    for list_key, falcon in (("tiles", False), ("falcon_tiles", True)):
        entries = data.get(list_key)
        if not isinstance(entries, list):
            chk.add(list_key, "", "missing or not a list")
            continue
        total = 0
        designs: dict[frozenset[tuple[Hashable, ...]], str] = {}
        for n, entry in enumerate(entries):
            where = chk.identified_entry(f"{list_key}[{n}]", entry, _TILE_KEYS, seen_ids)
            if where is None:
                continue
            tile_id = entry.get("id")
            count = chk.int_field(where, entry, "count", minimum=1)
            if count is not None:
                total += count
                if falcon and count != 1:
                    chk.add(where, "count", f"every Falcon tile is unique (count 1), got {count}")
            before = len(chk.issues)
            tokens = _check_piece(chk, where, entry, falcon=falcon, start=False)
            if tokens is None:
                continue
            segments = entry["segments"]
            if falcon and not any(
                isinstance(s, dict) and (s.get("kind") == Kind.CHAPEL or s.get("aeries")) for s in segments.values()
            ):
                chk.add(where, "segments", "a Falcon tile shows a chapel part or an aerie")
            if falcon and len(chk.issues) == before:
                # Only a well-formed tile can be built; the core compares designs up to rotation.
                design = design_key(build_tile(str(tile_id), entry, "falcon"))
                if design in designs:
                    chk.add(where, "", f"is the same tile as {designs[design]} (the 18 Falcon tiles are all different)")
                else:
                    designs[design] = str(tile_id)
        expected = EXPECTED["falcon_tiles" if falcon else "base_tiles"]
        if total != expected:
            chk.add(list_key, "count", f"the counts add up to {total}, the game has {expected} tiles")


def interior_cells(chk: Checker, where: str, rows: Any) -> frozenset[Cell] | None:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, str) for r in rows):
        chk.add(where, "interior", "must be a list of strings of '#' (tile space) and '.'")
        return None
    cells = set()
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            if ch == "#":
                cells.add((x, y))
            elif ch != ".":
                chk.add(where, "interior", f"row {y} column {x} has {ch!r}; use '#' or '.'")
    if cells:
        todo, seen = [min(cells)], {min(cells)}
        while todo:
            x, y = todo.pop()
            for dx, dy in SIDE_OFFSETS:
                n = (x + dx, y + dy)
                if n in cells and n not in seen:
                    seen.add(n)
                    todo.append(n)
        if len(seen) != len(cells):
            chk.add(where, "interior", f"is not one connected area ({len(seen)} of {len(cells)} spaces reachable)")
    return frozenset(cells)


def _check_start_spaces(
    chk: Checker, where: str, entries: Any, interior: frozenset[Cell] | None
) -> list[Mapping[str, Any]]:
    if not isinstance(entries, list):
        chk.add(where, "start_spaces", "missing or not a list")
        return []
    good = []
    ids: set[str] = set()
    cells: set[Cell] = set()
    for n, entry in enumerate(entries):
        swhere = chk.identified_entry(f"{where} start_spaces[{n}]", entry, _START_KEYS, ids)
        if swhere is None:
            continue
        if "gate" in entry and not isinstance(entry["gate"], bool):
            chk.add(swhere, "gate", "must be true/false")
        x, y = entry.get("x"), entry.get("y")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (x, y)):
            chk.add(swhere, "x/y", f"must be integers, got {x!r}, {y!r}")
            continue
        tokens = _check_piece(chk, swhere, entry, falcon=False, start=True)
        if (x, y) in cells:
            chk.add(swhere, "x/y", f"({x}, {y}) holds another start space")
        cells.add((x, y))
        if interior is None:
            continue
        if (x, y) in interior:
            chk.add(swhere, "x/y", f"({x}, {y}) is inside the castle; a start space lies on the wall")
            continue
        facing = [(x + dx, y + dy) in interior for dx, dy in SIDE_OFFSETS]
        if not any(facing):
            chk.add(swhere, "x/y", f"({x}, {y}) does not touch the interior along an edge")
            continue
        if tokens is None:
            continue
        for side, inward in enumerate(facing):
            side_tokens = tokens[3 * side : 3 * side + 3]
            name = "NESW"[side]
            if inward and "-" in side_tokens:
                chk.add(swhere, "ports", f"side {name} faces the interior and needs a segment on all 3 ports")
            if not inward and any(t != "-" for t in side_tokens):
                chk.add(swhere, "ports", f"side {name} faces the wall; its ports must be '-'")
        good.append(entry)
    return good


def _check_boards(chk: Checker, data: Mapping[str, Any], tile_ids: set[str]) -> None:
    boards = data.get("boards")
    if not isinstance(boards, dict):
        chk.add("boards", "", "missing or not an object with 'base' and 'falcon'")
        return
    for key in boards:
        if key not in ("base", "falcon"):
            chk.add("boards", str(key), "unknown board (allowed: base, falcon)")
    starts: dict[str, list[Mapping[str, Any]]] = {}
    for key in ("base", "falcon"):
        board = boards.get(key)
        where = f"boards.{key}"
        if not isinstance(board, dict):
            chk.add(where, "", "missing or not an object")
            continue
        chk.unknown_keys(where, board, {"interior", "start_spaces"})
        interior = interior_cells(chk, where, board.get("interior"))
        if key == "base" and interior is not None and len(interior) != EXPECTED["interior"]:
            chk.add(where, "interior", f"has {len(interior)} tile spaces, the castle has {EXPECTED['interior']}")
        all_tiles = EXPECTED["base_tiles"] + EXPECTED["falcon_tiles"]
        if key == "falcon" and interior is not None and len(interior) < all_tiles:
            chk.add(where, "interior", f"has {len(interior)} tile spaces, fewer than the 78 tiles")
        starts[key] = _check_start_spaces(chk, where, board.get("start_spaces"), interior)
        for n, entry in enumerate(starts[key]):
            if entry.get("id") in tile_ids:
                chk.add(f"{where} start_spaces[{n}] ({entry.get('id')})", "id", "is also the id of a castle tile")
        spaces = board.get("start_spaces")
        entries = spaces if isinstance(spaces, list) else []
        plain = [e for e in entries if isinstance(e, dict) and not e.get("gate")]
        gates = [e for e in entries if isinstance(e, dict) and e.get("gate")]
        if len(plain) != EXPECTED["start_spaces"]:
            chk.add(where, "start_spaces",
                    f"has {len(plain)} start spaces on the wall, the game has {EXPECTED['start_spaces']}")
        want_gates = EXPECTED["gate_start_spaces"] if key == "falcon" else 0
        if len(gates) != want_gates:
            chk.add(where, "start_spaces", f"has {len(gates)} start spaces on gates, expected {want_gates}")
        markets = sum(
            1 for e in plain if isinstance(e.get("segments"), dict)
            and any(isinstance(s, dict) and s.get("markets") for s in e["segments"].values())
        )
        if markets < 1:
            chk.add(where, "start_spaces", "no start space carries the printed market")
    if "base" in starts and "falcon" in starts:
        base_ids = {e.get("id") for e in boards["base"].get("start_spaces", []) if isinstance(e, dict)}
        falcon_ids = {
            e.get("id") for e in boards["falcon"].get("start_spaces", []) if isinstance(e, dict) and not e.get("gate")
        }
        if base_ids != falcon_ids:
            chk.add("boards.falcon", "start_spaces", f"the wall start spaces {sorted(map(str, falcon_ids))} "
                    f"differ from the base board's {sorted(map(str, base_ids))}")


def _check_track(chk: Checker, data: Mapping[str, Any]) -> None:
    track = data.get("track")
    if not isinstance(track, dict):
        chk.add("track", "", "missing or not an object")
        return
    chk.unknown_keys("track", track, {"length", "towers", "gates"})
    length = chk.int_field("track", track, "length", minimum=1)
    if length is not None and length != EXPECTED["track_length"]:
        chk.add("track", "length", f"is {length}, the track runs 0-99 (100 spaces)")
    length = length or EXPECTED["track_length"]
    gate_pairs = _check_gates(chk, track)
    towers = track.get("towers")
    if not isinstance(towers, list):
        chk.add("track", "towers", "missing or not a list")
        return
    used: dict[int, int] = {}
    with_token = 0
    for n, tower in enumerate(towers):
        with_token += _check_tower(chk, n, tower, length, gate_pairs, used)
    if len(towers) != EXPECTED["towers"]:
        chk.add("track", "towers", f"lists {len(towers)} towers, the wall has {EXPECTED['towers']}")
    if with_token != EXPECTED["token_towers"]:
        chk.add("track", "towers",
                f"{with_token} towers hold a wall tile, the game puts one on {EXPECTED['token_towers']}")
    for must in ((0, 1), (12, 13)):
        if used.get(must[0]) is None or used.get(must[0]) != used.get(must[1]):
            chk.add("track", "towers", f"the tower on {must[0]}/{must[1]} is missing")


def _check_gates(chk: Checker, track: Mapping[str, Any]) -> set[tuple[int, int]]:
    """The Falcon gates of the track, as pairs of the spaces each stands between."""
    gates = track.get("gates")
    gate_pairs: set[tuple[int, int]] = set()
    if not isinstance(gates, list) or not all(isinstance(g, list) and len(g) == 2 for g in gates):
        chk.add("track", "gates", "must be a list of [before, after] pairs")
    else:
        gate_pairs = {(g[0], g[1]) for g in gates}
        if tuple(sorted(gate_pairs)) != EXPECTED["gates"]:
            chk.add("track", "gates",
                    f"are {sorted(gate_pairs)}, the Falcon gates sit between 27/28, 47/48, 69/70 and 91/92")
    return gate_pairs


def _check_tower(
    chk: Checker, n: int, tower: Any, length: int, gate_pairs: set[tuple[int, int]], used: dict[int, int]
) -> int:
    """Tower ``n`` of the track (its spaces noted in ``used``); 1 when it holds a wall tile."""
    where = f"track.towers[{n}]"
    if not isinstance(tower, dict):
        chk.add(where, "", "must be an object")
        return 0
    chk.unknown_keys(where, tower, {"spaces", "token"})
    spaces = tower.get("spaces")
    token = tower.get("token")
    if not isinstance(token, bool):
        chk.add(where, "token", "must be true/false")
    if (
        not isinstance(spaces, list) or len(spaces) != 2
        or not all(isinstance(s, int) and not isinstance(s, bool) for s in spaces)
        or spaces[1] != spaces[0] + 1 or not 0 <= spaces[0] < length - 1
    ):
        chk.add(where, "spaces", f"must be two consecutive track spaces, got {spaces!r}")
        return 0
    for s in spaces:
        if s in used:
            chk.add(where, "spaces", f"space {s} is also in towers[{used[s]}]")
        used[s] = n
    if tuple(spaces) in gate_pairs:
        chk.add(where, "spaces", f"{spaces[0]}/{spaces[1]} are split by a Falcon gate")
    if spaces == [0, 1] and token is not False:
        chk.add(where, "token", "tower 0/1 never holds a wall tile")
    if spaces == [12, 13] and token is not True:
        chk.add(where, "token", "tower 12/13 holds a wall tile")
    return int(token is True)


def _check_wall_tiles(chk: Checker, data: Mapping[str, Any]) -> None:
    wall = data.get("wall_tiles")
    if not isinstance(wall, dict):
        chk.add("wall_tiles", "", "missing or not an object")
        return
    chk.unknown_keys("wall_tiles", wall, {"copies", "on_towers", "kinds", "numbering"})
    copies = chk.int_field("wall_tiles", wall, "copies", minimum=1)
    if copies is not None and copies != EXPECTED["wall_tile_copies"]:
        chk.add("wall_tiles", "copies", f"is {copies}, the game has 2 of each wall tile")
    on_towers = chk.int_field("wall_tiles", wall, "on_towers", minimum=1)
    if on_towers is not None and on_towers != EXPECTED["token_towers"]:
        chk.add("wall_tiles", "on_towers", f"is {on_towers}, 13 wall tiles go on the towers")
    kinds = wall.get("kinds")
    if not isinstance(kinds, dict):
        chk.add("wall_tiles", "kinds", "missing or not an object")
        return
    if len(kinds) != EXPECTED["wall_tile_kinds"]:
        chk.add("wall_tiles", "kinds", f"lists {len(kinds)} kinds, the game has {EXPECTED['wall_tile_kinds']}")
    for name, spec in kinds.items():
        where = f"wall_tiles.kinds.{name}"
        if not isinstance(spec, dict):
            chk.add(where, "", "must be an object")
            continue
        chk.unknown_keys(where, spec, {"effect", "feature", "points"})
        try:
            effect = WallEffect(spec.get("effect", ""))  # "" is no effect either: the same refusal
        except ValueError:
            chk.add(where, "effect", f"{spec.get('effect')!r} is not one of {', '.join(e.value for e in WallEffect)}")
            continue
        if effect in _EFFECT_FEATURES:
            allowed = _EFFECT_FEATURES[effect]
            if spec.get("feature") not in {k.value for k in allowed}:
                chk.add(where, "feature", f"{effect.value} needs a feature among {', '.join(sorted(allowed))}, "
                        f"got {spec.get('feature')!r}")
        elif "feature" in spec:
            chk.add(where, "feature", f"{effect.value} takes no feature")
        if effect in _EFFECT_POINTS:
            chk.int_field(where, spec, "points", minimum=1)
        elif "points" in spec:
            chk.add(where, "points", f"{effect.value} takes no points")
    numbering = wall.get("numbering")
    if not isinstance(numbering, dict) or set(numbering) != {"original", "polish"}:
        chk.add("wall_tiles", "numbering", "needs exactly the mappings 'original' and 'polish'")
        return
    for edition, mapping in numbering.items():
        where = f"wall_tiles.numbering.{edition}"
        if not isinstance(mapping, dict):
            chk.add(where, "", "must map numbers to kinds")
            continue
        want = {str(n) for n in range(1, len(kinds) + 1)}
        if set(mapping) != want:
            chk.add(where, "", f"must number the kinds 1-{len(kinds)}, got {sorted(mapping, key=str)}")
        for number, kind in mapping.items():
            if kind not in kinds:
                chk.add(where, str(number), f"names unknown kind {kind!r}")
        named = list(mapping.values())
        for kind in kinds:
            if named.count(kind) != 1:
                chk.add(where, "", f"kind {kind!r} is numbered {named.count(kind)} times, expected once")


def validate(data: Any) -> list[Issue]:
    """Every problem of a dataset (decoded JSON), as a list; empty when it is usable."""
    chk = Checker()
    if not isinstance(data, dict):
        chk.add("dataset", "", "must be a JSON object")
        return chk.issues
    chk.unknown_keys("dataset", data, _TOP_KEYS)
    if data.get("schema") != SCHEMA:
        chk.add("dataset", "schema", f"is {data.get('schema')!r}; this engine reads schema {SCHEMA}")
    if not isinstance(data.get("name"), str) or not data.get("name"):
        chk.add("dataset", "name", "missing or empty")
    provisional = data.get("provisional", {})
    if not isinstance(provisional, dict) or not all(isinstance(v, str) for v in provisional.values()):
        chk.add("dataset", "provisional", "must map each provisional part to a sentence")
    components = data.get("components")
    if not isinstance(components, dict):
        chk.add("components", "", "missing or not an object")
    else:
        chk.unknown_keys("components", components, {"followers_in_supply", "aerie_tokens"})
        for key in ("followers_in_supply", "aerie_tokens"):
            value = chk.int_field("components", components, key, minimum=1)
            if value is not None and value != EXPECTED[key]:
                chk.add("components", key, f"is {value}, the game has {EXPECTED[key]}")
    tile_ids: set[str] = set()
    _check_tiles(chk, data, tile_ids)
    _check_boards(chk, data, tile_ids)
    _check_track(chk, data)
    _check_wall_tiles(chk, data)
    return chk.issues
