"""A from-scratch rescoring of a Carcassonne game, independent of the board's union-find.

:func:`recount` replays the turns of a state (tiles, rotations, followers) on a plain grid and
finds features by flood fill every time it needs one, then scores them with its own short code.
It shares only the tile data with the engine. Tests compare its totals with the engine's scores.
"""

from __future__ import annotations

from games.carcassonne.state import State
from games.carcassonne.tiles import CITY, FIELD, MONASTERY, ROAD, START_TILE
from games.tileboard import PORT_INDEX, SIDE_OFFSETS, Segment, Tile, mirror_port

__all__ = ["recount"]

Node = tuple[int, int, int]


class _Grid:
    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], tuple[Tile, int]] = {}

    def seg_at_port(self, x: int, y: int, port: int) -> int | None:
        tile, q = self.cells[(x, y)]
        return tile.ports[(port - 3 * q) % 12]

    def ports_of(self, x: int, y: int, seg: int) -> list[int]:
        return [p for p in range(12) if self.seg_at_port(x, y, p) == seg]

    def segment(self, node: Node) -> Segment:
        x, y, i = node
        return self.cells[(x, y)][0].segments[i]

    def flood(self, start: Node) -> tuple[frozenset[Node], bool]:
        """The feature containing ``start`` and whether any of its ports faces an empty cell."""
        kind = self.segment(start).kind
        seen = {start}
        stack = [start]
        is_open = False
        while stack:
            x, y, i = stack.pop()
            for p in self.ports_of(x, y, i):
                dx, dy = SIDE_OFFSETS[p // 3]
                n = (x + dx, y + dy)
                if n not in self.cells:
                    is_open = True
                    continue
                j = self.seg_at_port(n[0], n[1], mirror_port(p))
                if j is None or self.segment((n[0], n[1], j)).kind != kind:
                    continue
                node = (n[0], n[1], j)
                if node not in seen:
                    seen.add(node)
                    stack.append(node)
        return frozenset(seen), is_open

    def ring(self, x: int, y: int) -> int:
        return sum((x + dx, y + dy) in self.cells for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)


def _resolve(grid: _Grid, x: int, y: int, at: str) -> int:
    if at in PORT_INDEX:
        seg = grid.seg_at_port(x, y, PORT_INDEX[at])
        if seg is None:
            raise ValueError(f"a follower at port {at} of ({x}, {y}), where the tile has no segment")
        return seg
    tile, _ = grid.cells[(x, y)]
    want = MONASTERY if at == MONASTERY else FIELD
    return next(i for i, s in enumerate(tile.segments) if s.kind == want and not grid.ports_of(x, y, i))


def _winners(followers: list[tuple[int, Node, str | None]]) -> list[int]:
    power: dict[int, int] = {}
    for seat, _, kind in followers:
        power[seat] = power.get(seat, 0) + (2 if kind == "large" else 1)
    best = max(power.values())
    return [s for s, v in power.items() if v == best]


def _points(grid: _Grid, nodes: frozenset[Node], complete: bool, state: State) -> int:
    kind = grid.segment(next(iter(nodes))).kind
    tiles = len({(x, y) for x, y, _ in nodes})
    attrs = [dict(grid.segment(n).attrs) for n in nodes]
    if kind == ROAD:
        inn = any(a.get("inn") for a in attrs)
        return tiles * ((2 if inn else 1) if complete else (0 if inn else 1))
    if kind == CITY:
        pennants = sum(1 for a in attrs if a.get("pennant"))
        if any(a.get("cathedral") for a in attrs):
            return 3 * (tiles + pennants) if complete else 0
        if not complete or (tiles == 2 and state.options.tiny_city_points == 2):
            return tiles + pennants
        return 2 * (tiles + pennants)
    if kind == MONASTERY:
        (x, y, _), = nodes
        return 1 + grid.ring(x, y)
    # A field: 3 per distinct completed city touching any of its segments.
    cities = set()
    for x, y, i in nodes:
        for j in grid.segment((x, y, i)).touches:
            city, city_open = grid.flood((x, y, j))
            if not city_open:
                cities.add(city)
    return 3 * len(cities)


def recount(state: State) -> list[int]:
    """Scores per seat obtained by replaying ``state.turns`` and scoring from scratch.

    For a finished game this equals ``state.scores``; for an unfinished one it is the score so
    far plus what the final scoring would give now.
    """
    tiles = state.options.tiles.tiles
    grid = _Grid()
    grid.cells[(0, 0)] = (tiles[START_TILE], 0)
    on_board: list[tuple[int, Node, str | None]] = []
    scores = [0] * state.seats

    def score(nodes: frozenset[Node], complete: bool) -> None:
        here = [f for f in on_board if f[1] in nodes]
        if not here:
            return
        points = _points(grid, nodes, complete, state)
        for seat in _winners(here):
            scores[seat] += points
        for f in here:
            on_board.remove(f)

    for turn in state.turns:
        grid.cells[(turn.x, turn.y)] = (tiles[turn.tile], turn.rotation // 90)
        if turn.at is not None:
            on_board.append((turn.seat, (turn.x, turn.y, _resolve(grid, turn.x, turn.y, turn.at)), turn.kind))
        tile = tiles[turn.tile]
        for i, seg in enumerate(tile.segments):
            if seg.kind in (ROAD, CITY):
                nodes, is_open = grid.flood((turn.x, turn.y, i))
                if not is_open:
                    score(nodes, True)
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                cx, cy = turn.x + dx, turn.y + dy
                if (cx, cy) not in grid.cells:
                    continue
                for i, seg in enumerate(grid.cells[(cx, cy)][0].segments):
                    if seg.kind == MONASTERY and grid.ring(cx, cy) == 8:
                        score(frozenset({(cx, cy, i)}), True)

    while on_board:
        nodes, is_open = grid.flood(on_board[0][1])
        score(nodes, False)
    return scores
