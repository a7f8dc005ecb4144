"""The shared tile-board core: tiles as ports and segments, an immutable board, features.

Used by Carcassonne and by Carcassonne: The Castle. It knows no game's rules; a game supplies
its tile designs (:class:`Tile`), a :class:`BoardRules` subclass with its hooks, and does its own
scoring with the features the board maintains.

API guide
=========

Tiles (:mod:`games.tileboard.tiles`)
    Ports 0..11 = ``Nw N Ne En E Es Se S Sw Ws W Wn`` (``PORT_NAMES``, ``PORT_INDEX``), three
    per side, clockwise from the north-west corner. Side ``s`` (``Side.N/E/S/W`` = 0..3) holds
    ports ``3s..3s+2``. A quarter turn clockwise moves port ``i`` to ``(i+3) % 12``
    (:func:`rotate_port`); across an edge ``Nw`` faces the neighbour's ``Sw`` (:func:`mirror_port`).
    Coordinates: x east, y south, the north neighbour of (x, y) is (x, y-1) (:func:`neighbour`).
    Rotations are degrees clockwise, one of ``ROTATIONS = (0, 90, 180, 270)``.

    ``Segment(kind, attrs=(("pennant", 1),), touches=(indices,), token="A")``: one connected
    piece; ``kind`` is any string; numeric/bool attrs are summed per feature; ``touches`` lists
    other segments of the same tile it borders (field -> city). Segments may have no port.

    ``Tile(id, ports, segments, extra=())``: ``ports[p]`` is a segment index or ``None`` (a
    wall / half-tile edge: joins nothing, never open). Build one from a port string with
    ``Tile.from_tokens("D", "AAA 1r2 222 2r1", {"A": Segment("city"), "r": Segment("road"),
    "1": Segment("field"), "2": Segment("field")}, touches={"1": "A"})`` (token ``.`` = no
    segment). Precomputed per quarter turn ``q``: ``rotated[q][p]`` (segment at board port p),
    ``side_kinds[q][s]``, ``segment_ports[q][i]``, ``port_masks[q][i]`` (the same as bits),
    ``canonical_turn[q]`` (rotation dedupe); ``sums[i]`` are a segment's summed attrs.
    ``extra`` holds free per-tile facts (``tile.get(name)``). Tiles compare by identity and ids
    must be unique within a game. ``design_key(tile)`` is equal for two tiles that are the same
    design in some rotation (to find a design listed twice in a tile set).

Rules hooks (:class:`BoardRules`; subclass, override, keep one instance per game/variant)
    ``is_playable(x, y)`` (default: everywhere), ``side_key(kinds3)`` (reduce a side, given as the
    three kinds aligned port-to-port, to a hashable key; default the tuple itself; Carcassonne
    returns the middle kind), ``sides_match(mine_key, their_key)`` (default ``==``),
    ``wall_ok(mine_key)`` (may a side face an unplayable empty cell; default True),
    ``joins(kind_a, kind_b)`` (do facing segments join; default same kind).
    ``fits(tile, constraint)`` is memoised per rules instance.

Board (:class:`Board`, immutable: every change returns a new board)
    ``Board.empty(rules)``; ``board.place(tile, x, y, rotation, check=True, fixed=False)``
    (``check=False`` for the start tile and border pieces such as The Castle's start spaces;
    place them in unplayable cells; ``Placed.fixed`` marks them); ``board.cells[(x, y)] ->
    Placed(tile, x, y, rotation, fixed)`` with ``.ports`` (segment per board port) and
    ``.segment_ports(i)``.
    Legality: a tile must touch a placed tile (or fixed piece) along an edge and every facing
    side must match. ``board.frontier`` maps each candidate cell to its constraint.
    ``legal_placements(tile, distinct=False) -> [(x, y, rotation)]`` (all rotations; with
    ``distinct=True`` one per distinct orientation), ``is_legal(tile, x, y, rotation)``,
    ``can_place(tile)``.

Features (:class:`Feature`, maintained by union on every placement)
    ``board.feature_of(x, y, seg)``, ``board.features_on(x, y)``, ``board.all_features()``;
    ``board.features_around(x, y) -> [((x, y, seg), feature)]`` adds the features bordering the
    tile across an edge (closed by it without joining it).
    ``Feature(id, kind, segments={(x, y, seg)}, cells={(x, y)}, open_ports, attrs, followers)``;
    ``.complete`` is ``open_ports == 0`` (ports facing an unplayable cell or a placed tile are
    closed; a port-less segment is trivially complete, so cloister-like completion is the
    game's business: ``board.neighbours8(x, y)``). ``.tile_count`` counts each cell once;
    ``.count("pennant")`` sums an attribute. ``board.open_ports(feature) -> [(x, y, port)]``;
    ``board.touching_features(feature) -> {feature ids}`` via ``Segment.touches``.
    Feature ids are stable while a feature lives; a merge keeps the bigger feature's id.

Followers
    ``Follower(owner, kind, x, y, segment)``. ``board.free_segments(x, y)`` lists the segments
    of a tile whose feature holds no follower; ``board.with_follower(f)`` (no checks),
    ``board.without_followers([feature ids])``, ``board.without_followers_at([(x, y, seg)])``,
    ``board.followers()``.

Naming spots, the follower step (:mod:`games.tileboard.spots`)
    Clients name a segment of a placed tile by any of its board ports or, without ports, by its
    ``name`` attr. ``segment_name(placed, seg, middle_first=False)`` is the canonical name (first
    port; with ``middle_first`` its first N/E/S/W port); ``find_segment(placed, at)``;
    ``feature_at(board, x, y, at)``; ``free_spots(board, x, y, middle_first=, one_per_feature=)
    -> [Spot(at, segment, feature)]`` (follower spots of a tile); ``follower_record(board, f)
    -> [owner, x, y, at, kind]`` (how events record a follower).

Drawing (:mod:`games.tileboard.draw`)
    Piles are ``(id, count)`` multisets in a stable order, never shuffled lists. A pile is dealt
    once (``rng.deal``, ``donjon-draw-2``): ``draw(rng, pool, deck=, contents=)`` is the deal's
    next item (per decision: ``rng.randrange(total)`` then walk, ``pick(pool, index)``);
    ``take(pool, id)``; ``draw_sequence(rng, pool, order=None, contents=)`` lazily yields
    successive draws (or the scripted order); ``TILES`` names the tile pile's deal;
    ``draw_until_placeable(board, tile_of, drawn) -> (unplaceable ids, id or None)`` is
    the redraw of tiles that fit nowhere; ``check_draw_order(order, available, ...)`` checks a
    scripted order option, reporting every problem at once.

Majority (:mod:`games.tileboard.majority`)
    ``majority(followers, weight=lambda f: 1, ties=Ties.ALL_SCORE) -> (owners...)``,
    ``weights_by_owner(followers, weight)``. ``Ties.NOBODY_SCORES`` makes a tie score nothing.
"""

from games.tileboard import board as _board_module
from games.tileboard.board import WALL, Board, BoardRules, Feature, Follower, IllegalPlacement, Placed
from games.tileboard.draw import TILES, check_draw_order, draw, draw_sequence, draw_until_placeable, pick, take
from games.tileboard.majority import Ties, majority, weights_by_owner
from games.tileboard.spots import Spot, feature_at, find_segment, follower_record, free_spots, segment_name
from games.tileboard.tiles import (
    MIDDLE_PORTS,
    PORT_INDEX,
    PORT_NAMES,
    ROTATIONS,
    SIDE_OFFSETS,
    Segment,
    Side,
    SideKinds,
    Tile,
    design_key,
    mirror_port,
    neighbour,
    parse_ports,
    rotate_port,
    side_of,
)

__all__ = [
    "BOARD_COMPILED",
    "MIDDLE_PORTS",
    "PORT_INDEX",
    "PORT_NAMES",
    "ROTATIONS",
    "SIDE_OFFSETS",
    "WALL",
    "Board",
    "BoardRules",
    "Feature",
    "Follower",
    "IllegalPlacement",
    "Placed",
    "Segment",
    "Side",
    "SideKinds",
    "Spot",
    "Tile",
    "Ties",
    "TILES",
    "check_draw_order",
    "design_key",
    "draw",
    "draw_sequence",
    "draw_until_placeable",
    "feature_at",
    "find_segment",
    "follower_record",
    "free_spots",
    "majority",
    "mirror_port",
    "neighbour",
    "parse_ports",
    "pick",
    "rotate_port",
    "segment_name",
    "side_of",
    "take",
    "weights_by_owner",
]

BOARD_COMPILED: bool = not (_board_module.__file__ or "").endswith(".py")
"""Does this install run ``board.py`` compiled by mypyc (``setup.py``), or as plain Python (an
editable install, ``DONJON_PURE_PYTHON``, or no C compiler at install)? Both play alike."""
