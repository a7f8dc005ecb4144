"""Tiles as twelve ports mapped to segments, and the geometry of ports, sides and rotations.

A tile side has three ports; the twelve ports of a tile are numbered clockwise from the
north-west corner::

    0 Nw  1 N  2 Ne | 3 En  4 E  5 Es | 6 Se  7 S  8 Sw | 9 Ws  10 W  11 Wn

Each port belongs to one segment of the tile (or to none: a wall, the edge of a half tile).
A segment is a connected piece of one kind ("city", "road", "field", "path", ...); segments
without any port (a monastery, an inner field) are allowed. Kinds and attributes are strings and
values the game chooses; this module knows nothing of any game.

Rotating a tile a quarter turn clockwise moves the content of port ``i`` to port ``(i + 3) % 12``.
Across a shared edge ports pair mirror-wise (``Nw`` faces the northern neighbour's ``Sw``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

__all__ = [
    "PORT_NAMES",
    "PORT_INDEX",
    "MIDDLE_PORTS",
    "ROTATIONS",
    "Side",
    "SIDE_OFFSETS",
    "Segment",
    "SideKinds",
    "Tile",
    "design_key",
    "mirror_port",
    "neighbour",
    "parse_ports",
    "rotate_port",
    "side_of",
]

PORT_NAMES: tuple[str, ...] = ("Nw", "N", "Ne", "En", "E", "Es", "Se", "S", "Sw", "Ws", "W", "Wn")
PORT_INDEX: Mapping[str, int] = {name: i for i, name in enumerate(PORT_NAMES)}
MIDDLE_PORTS: tuple[int, ...] = (1, 4, 7, 10)
ROTATIONS: tuple[int, ...] = (0, 90, 180, 270)
SideKinds = tuple[str | None, str | None, str | None]
"""The kinds of the three ports of one side, clockwise (``None``: no segment there)."""
"""Rotations in degrees clockwise, as clients send them."""


class Side(IntEnum):
    """The four sides of a cell; side ``s`` holds ports ``3s, 3s+1, 3s+2``."""

    N = 0
    E = 1
    S = 2
    W = 3


SIDE_OFFSETS: tuple[tuple[int, int], ...] = ((0, -1), (1, 0), (0, 1), (-1, 0))
"""(dx, dy) of the neighbour across each side; y grows to the south."""


def rotate_port(port: int, quarter_turns: int) -> int:
    """Where port ``port`` ends up after ``quarter_turns`` clockwise quarter turns."""
    return (port + 3 * quarter_turns) % 12


def side_of(port: int) -> int:
    return port // 3


def mirror_port(port: int) -> int:
    """The neighbour's port facing ``port`` across the shared edge (``Nw`` -> ``Sw``)."""
    side, pos = divmod(port, 3)
    return 3 * ((side + 2) % 4) + (2 - pos)


def neighbour(x: int, y: int, side: int) -> tuple[int, int]:
    dx, dy = SIDE_OFFSETS[side]
    return (x + dx, y + dy)


def parse_ports(text: str) -> tuple[str, ...]:
    """The twelve port tokens of a compact port string such as ``"AAA 1r2 222 2r1"``.

    Whitespace is ignored; each remaining character is one token, in port order.
    """
    tokens = tuple(ch for ch in text if not ch.isspace())
    if len(tokens) != 12:
        raise ValueError(f"a port string needs 12 tokens, got {len(tokens)} in {text!r}")
    return tokens


@dataclass(frozen=True, slots=True)
class Segment:
    """One connected piece of a tile.

    ``attrs`` are free (name, value) facts: numbers and bools are summed per feature by the
    board (a pennant counts 1). ``touches`` lists other segments of the same tile this one
    borders (e.g. a field touching a city), as indices into the tile's segments.
    """

    kind: str
    attrs: tuple[tuple[str, Any], ...] = ()
    touches: tuple[int, ...] = ()
    token: str = ""

    def attr(self, name: str, default: Any = None) -> Any:
        for key, value in self.attrs:
            if key == name:
                return value
        return default


def _canonical(ports: tuple[int | None, ...], segments: tuple[Segment, ...]) -> tuple[Hashable, ...]:
    """A rotation-sensitive fingerprint that ignores how segments happen to be numbered (and
    their tokens): the ports relabelled by first appearance, then each segment's kind, attrs
    and touches."""
    order: dict[int, int] = {}
    for seg in ports:
        if seg is not None and seg not in order:
            order[seg] = len(order)
    for i in range(len(segments)):
        order.setdefault(i, len(order))
    relabelled = tuple(None if s is None else order[s] for s in ports)
    by_new = sorted(range(len(segments)), key=order.__getitem__)
    segs = tuple(
        (segments[i].kind, segments[i].attrs, tuple(sorted(order[t] for t in segments[i].touches)))
        for i in by_new
    )
    return relabelled, segs


@dataclass(frozen=True, slots=True, eq=False)
class Tile:
    """A tile design: ``ports[p]`` is the index of the segment at port ``p`` (or ``None``).

    Equality and hashing are by identity: a game keeps one ``Tile`` object per design and
    looks tiles up by ``id``. Ids must be unique within one game.
    """

    id: str
    ports: tuple[int | None, ...]
    segments: tuple[Segment, ...]
    extra: tuple[tuple[str, Any], ...] = ()
    rotated: tuple[tuple[int | None, ...], ...] = field(init=False, repr=False)
    """``rotated[q][p]``: segment at board port ``p`` after ``q`` quarter turns."""
    side_kinds: tuple[tuple[SideKinds, ...], ...] = field(init=False, repr=False)
    """``side_kinds[q][s]``: kinds of the three ports of side ``s`` (clockwise) after ``q`` turns."""
    segment_ports: tuple[tuple[tuple[int, ...], ...], ...] = field(init=False, repr=False)
    """``segment_ports[q][i]``: board ports of segment ``i`` after ``q`` turns, ascending."""
    canonical_turn: tuple[int, ...] = field(init=False, repr=False)
    """``canonical_turn[q]``: the smallest quarter turn giving the same oriented tile as ``q``."""
    port_masks: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    """``port_masks[q][i]``: the board ports of segment ``i`` after ``q`` turns as bits
    (``1 << port``), so the board counts a segment's open ports with one ``&``."""
    sums: tuple[dict[str, int], ...] = field(init=False, repr=False)
    """``sums[i]``: the numeric and true attrs of segment ``i`` as ints, which the board adds
    up per feature (read-only: features share these dicts)."""

    def __post_init__(self) -> None:
        if len(self.ports) != 12:
            raise ValueError(f"tile {self.id!r} needs 12 ports, got {len(self.ports)}")
        for seg in self.ports:
            if seg is not None and not 0 <= seg < len(self.segments):
                raise ValueError(f"tile {self.id!r}: port refers to missing segment {seg}")
        rotated = tuple(tuple(self.ports[(p - 3 * q) % 12] for p in range(12)) for q in range(4))
        kinds = tuple(
            tuple(
                tuple(None if s is None else self.segments[s].kind for s in rot[3 * side : 3 * side + 3])
                for side in range(4)
            )
            for rot in rotated
        )
        seg_ports = tuple(
            tuple(tuple(p for p in range(12) if rot[p] == i) for i in range(len(self.segments)))
            for rot in rotated
        )
        prints = [_canonical(rot, self.segments) for rot in rotated]
        canonical = tuple(prints.index(fp) for fp in prints)
        masks = tuple(tuple(sum(1 << p for p in ports) for ports in per_turn) for per_turn in seg_ports)
        sums = tuple({k: int(v) for k, v in seg.attrs if isinstance(v, (bool, int)) and v} for seg in self.segments)
        object.__setattr__(self, "rotated", rotated)
        object.__setattr__(self, "side_kinds", kinds)
        object.__setattr__(self, "segment_ports", seg_ports)
        object.__setattr__(self, "canonical_turn", canonical)
        object.__setattr__(self, "port_masks", masks)
        object.__setattr__(self, "sums", sums)

    @classmethod
    def from_tokens(
        cls,
        tile_id: str,
        ports: str,
        segments: Mapping[str, Segment],
        *,
        touches: Mapping[str, str] | None = None,
        extra: tuple[tuple[str, Any], ...] = (),
        wall: str = ".",
    ) -> Tile:
        """Build a tile from a port string and one :class:`Segment` per token.

        Segments are numbered in order of first appearance in ``ports``, then the port-less
        tokens of ``segments`` in their mapping order. ``touches`` maps a token to the tokens it
        borders on this tile (``{"1": "A"}``); ``wall`` is the token of a port with no segment.

        >>> t = Tile.from_tokens("D", "AAA 1r2 222 2r1", {"A": Segment("city"),
        ...     "r": Segment("road"), "1": Segment("field"), "2": Segment("field")}, touches={"1": "A"})
        >>> [s.token for s in t.segments], t.ports[3], t.segments[1].touches
        (['A', '1', 'r', '2'], 1, (0,))
        """
        tokens = parse_ports(ports)
        order: list[str] = []
        for tok in tokens:
            if tok != wall and tok not in order:
                order.append(tok)
        for tok in segments:
            if tok not in order:
                order.append(tok)
        missing = [tok for tok in order if tok not in segments]
        if missing:
            raise ValueError(f"tile {tile_id!r}: no segment given for tokens {missing}")
        index = {tok: i for i, tok in enumerate(order)}
        touches = touches or {}
        built = []
        for tok in order:
            seg = segments[tok]
            near = tuple(index[t] for t in touches.get(tok, "")) or seg.touches
            built.append(Segment(seg.kind, seg.attrs, near, tok))
        port_segs = tuple(None if tok == wall else index[tok] for tok in tokens)
        return cls(tile_id, port_segs, tuple(built), extra)

    def segment_at(self, port: int, quarter_turns: int = 0) -> int | None:
        """The segment at board port ``port`` when the tile lies turned ``quarter_turns``."""
        return self.rotated[quarter_turns][port]

    def portless_segments(self) -> tuple[int, ...]:
        return tuple(i for i, ports in enumerate(self.segment_ports[0]) if not ports)

    def get(self, name: str, default: Any = None) -> Any:
        """A per-tile extra fact."""
        for key, value in self.extra:
            if key == name:
                return value
        return default

    def __repr__(self) -> str:
        return f"Tile({self.id!r})"


def design_key(tile: Tile) -> frozenset[tuple[Hashable, ...]]:
    """Equal for two tiles that are the same design in some rotation (ids, tokens and segment
    numbering aside); use it to find a design listed twice in a tile set.

    >>> city = {"A": Segment("city"), "1": Segment("field")}
    >>> cap_n = Tile.from_tokens("N", "AAA 111 111 111", city)
    >>> cap_e = Tile.from_tokens("E", "111 AAA 111 111", city)
    >>> cap_ne = Tile.from_tokens("X", "AAA AAA 111 111", city)
    >>> design_key(cap_n) == design_key(cap_e), design_key(cap_n) == design_key(cap_ne)
    (True, False)
    """
    # The set of the four rotations' fingerprints: a rotated copy has the same set.
    return frozenset(_canonical(ports, tile.segments) for ports in tile.rotated)
