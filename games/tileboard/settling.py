"""A board's settling: its features and frontier copied once from the nearest settled board and
changed in place by a run of recorded changes (a tile placed, a follower set, followers cleared),
then frozen into a settled board's fields (see :mod:`games.tileboard.board`).

Compiled by mypyc with :mod:`games.tileboard.board` (see there): kept to what mypyc compiles."""

from __future__ import annotations

from typing import Any

from games.tileboard.features import Draft, Feature, Placed
from games.tileboard.fit import OPPOSITE, SIDE_MASKS, BoardRules, Cell, Constraint, SegRef
from games.tileboard.tiles import SIDE_OFFSETS

Change = tuple[Any, ...]
"""One recorded change of a board: ``(PLACE, placed)``, ``(FOLLOWER, follower)``,
``(CLEAR, feature ids)`` or ``(CLEAR_AT, segment refs)``."""
PLACE, FOLLOWER, CLEAR, CLEAR_AT = range(4)

MAX_PENDING = 64
"""A board settles once this many changes wait on it, so that the settled board it holds on to
is never far behind."""


class Settling:
    """The features and frontier of a settled board, copied once and changed in place by a run of
    recorded changes, then frozen into a settled board's fields (see :class:`Board`)."""

    def __init__(
        self, rules: BoardRules, cells: dict[Cell, Placed], seg_feature: dict[SegRef, int],
        features: dict[int, Feature], frontier: dict[Cell, Constraint], next_id: int,
    ) -> None:
        """Settling from a settled board's ``cells`` and fields (copied: that board keeps its own)."""
        self.rules = rules
        self.seg_feature = dict(seg_feature)
        self.features: dict[int, Feature | Draft] = dict(features)
        self.frontier = dict(frontier)
        self.next_id = next_id
        self.drafted: list[Draft] = []
        self.settled_cells = cells
        self.placed: dict[Cell, Placed] = {}
        """The tiles placed by the changes applied so far (``settled_cells`` has the others)."""
        self.applied = 0
        """How many changes since the settled board have been applied."""

    def draft(self, fid: int) -> Draft:
        """The feature ``fid``, made changeable (once per settling)."""
        feature = self.features[fid]
        if type(feature) is Draft:
            return feature
        d = self.features[fid] = Draft(feature)  # type: ignore[arg-type]
        self.drafted.append(d)
        return d

    def frozen(self, fid: int) -> Feature:
        """The feature ``fid`` as it stands, frozen (a later change drafts it again)."""
        feature = self.features[fid]
        if type(feature) is Draft:
            feature = self.features[fid] = feature.freeze()
        return feature  # type: ignore[return-value]

    def apply(self, change: Change) -> None:
        """Apply the next recorded change."""
        self.applied += 1
        kind = change[0]
        if kind == PLACE:
            self.place(change[1])
        elif kind == FOLLOWER:
            follower = change[1]
            d = self.draft(self.seg_feature[(follower.x, follower.y, follower.segment)])
            d.followers = (*d.followers, follower)
        else:
            fids = change[1] if kind == CLEAR else [self.seg_feature[ref] for ref in change[1]]
            for fid in fids:
                if self.features[fid].followers:
                    self.draft(fid).followers = ()

    def place(self, placed: Placed) -> None:
        """Join the new tile's segments to its neighbours' features and move the frontier."""
        tile, x, y = placed.tile, placed.x, placed.y
        q = placed.rotation // 90
        seg_feature, features = self.seg_feature, self.features

        # Each segment starts as a feature of its own (new ids, in segment order); the joins
        # merge some of them into the neighbours' features, and only the others are added, at the
        # end of ``features``.
        first = self.next_id
        masks, sums, segments = tile.port_masks[q], tile.sums, tile.segments
        for i in range(len(segments)):
            seg_feature[(x, y, i)] = first + i
        self.next_id = first + len(segments)

        open_sides, open_mask, facing_ports, joined = self._sides(placed, q)
        joined_here = self._join(placed, q, first, open_mask, facing_ports, joined)
        cell = frozenset(((x, y),))
        for i, segment in enumerate(segments):  # this tile's segments that joined nothing, in order
            if first + i not in joined_here:
                features[first + i] = Feature(first + i, segment.kind, frozenset(((x, y, i),)), cell,
                                              (masks[i] & open_mask).bit_count(), sums[i])
        self._move_frontier(placed, q, open_sides)
        self.placed[(x, y)] = placed

    def _sides(self, placed: Placed, q: int) -> tuple[list[int], int, dict[int, int], list[tuple[SegRef, SegRef]]]:
        """Walk each side of the new tile once: an empty playable neighbour makes this side's ports
        open (the sides and their port mask); across a shared edge, the neighbours' features and
        their ports facing this cell are counted, and facing segments that join are noted."""
        tile, x, y = placed.tile, placed.x, placed.y
        settled_cells, placed_here = self.settled_cells, self.placed
        rules = self.rules
        playable, edges, side_ids = rules.playable, rules.edges, rules.side_ids
        my_sides = side_ids[tile][q]
        seg_feature = self.seg_feature
        open_sides: list[int] = []
        open_mask = 0
        facing_ports: dict[int, int] = {}
        joined: list[tuple[SegRef, SegRef]] = []
        for side in range(4):
            dx, dy = SIDE_OFFSETS[side]
            n = (x + dx, y + dy)
            other = settled_cells.get(n) or placed_here.get(n)  # the tile there, as of this change
            if other is None:
                if playable[n]:
                    open_sides.append(side)
                    open_mask |= SIDE_MASKS[side]
                continue
            their_facing, joins = edges[(my_sides[side], side_ids[other.tile][other.rotation // 90][OPPOSITE[side]])]
            ox, oy = other.x, other.y
            for theirs, count in their_facing:
                fid = seg_feature[(ox, oy, theirs)]
                facing_ports[fid] = facing_ports.get(fid, 0) + count
            for mine, theirs in joins:
                joined.append(((x, y, mine), (ox, oy, theirs)))
        return open_sides, open_mask, facing_ports, joined

    def _join(
        self, placed: Placed, q: int, first: int, open_mask: int, facing_ports: dict[int, int],
        joined: list[tuple[SegRef, SegRef]],
    ) -> set[int]:
        """Close the facing features' ports and merge the joined segments; the ids (from
        ``first``) of the new tile's segments that went into a neighbour's feature."""
        x, y = placed.x, placed.y
        masks, sums = placed.tile.port_masks[q], placed.tile.sums
        seg_feature, features = self.seg_feature, self.features
        # Every feature facing the tile changes (its ports facing a playable cell close, or it
        # merges): each is drafted once, here, and the merges below only meet these drafts.
        draft, here_playable = self.draft, self.rules.playable[(x, y)]
        drafts: dict[int, Draft] = {}
        for fid, count in facing_ports.items():
            d = drafts[fid] = draft(fid)
            if here_playable:
                d.open_ports -= count
        here = ((x, y),)
        joined_here: set[int] = set()
        for mine_ref, their_ref in joined:
            fid = seg_feature[mine_ref]
            b = drafts[seg_feature[their_ref]]
            if fid >= first:
                # A segment of this tile joining for the first time goes into the neighbour's
                # feature: being the smallest and newest, it never keeps its id.
                i = fid - first
                b.take(mine_ref, here, (masks[i] & open_mask).bit_count(), sums[i])
                seg_feature[mine_ref] = b.id
                joined_here.add(fid)
                continue
            a = drafts[fid]  # a segment of this tile already in a facing feature
            if a is b:
                continue
            # Keep the bigger feature's id (then the older one) and relabel the smaller.
            if (a.size, -a.id) < (b.size, -b.id):
                a, b = b, a
            aid = a.id
            for part in b.segments:
                for ref in part:
                    seg_feature[ref] = aid
            a.absorb(b)
            del features[b.id]
        return joined_here

    def _move_frontier(self, placed: Placed, q: int, open_sides: list[int]) -> None:
        """The empty playable cells beside the new tile: a cell already in the frontier changes
        only on the side facing the new tile; a new one touches no other tile (else it would be
        in the frontier), so its other sides are empty or walls."""
        x, y = placed.x, placed.y
        frontier = self.frontier
        frontier.pop((x, y), None)
        facing = self.rules.facing_keys(placed.tile)[q]
        blank = self.rules.blank_constraint
        for side in open_sides:
            dx, dy = SIDE_OFFSETS[side]
            n = (x + dx, y + dy)
            constraint = list(frontier.get(n) or blank[n])
            constraint[OPPOSITE[side]] = facing[side]
            frontier[n] = tuple(constraint)

    def freeze(self) -> tuple[dict[SegRef, int], dict[int, Feature], dict[Cell, Constraint], int]:
        """The settled fields; each feature changed by the run becomes a :class:`Feature` once."""
        features = self.features
        for d in self.drafted:
            if features.get(d.id) is d:
                features[d.id] = d.freeze()
        return self.seg_feature, features, self.frontier, self.next_id  # type: ignore[return-value]
