"""The scoring track on top of the castle wall: laps, corner towers and the Falcon gates.

The track runs 0..99 around the wall and the marker keeps going round: a score of 112 stands on
space 12 of the second lap (the rules file's default: wrap to 0, remember +100). Landing
exactly on either space of a corner tower is what takes its wall tile, on any lap, because the
physical marker simply stands there. With the Falcon gates the markers jump over the gates
(they are not spaces, so plain scoring is unchanged); with the "Halt! Who goes there?" variant a
marker that reaches a gate during the game stops on it and the rest of that score is lost. The
next score moves it on from the gate to the number after it.

>>> wall = Wall.build(towers=((0, 1), (12, 13)), gates=((27, 28),))
>>> wall.advance(Marker(10), 3).end, wall.advance(Marker(10), 3).tower
(Marker(score=13, gate=None), 1)
>>> step = wall.advance(Marker(25), 5, halt_at_gates=True)
>>> step.end, step.lost
(Marker(score=27, gate=27), 3)
>>> wall.advance(step.end, 1, halt_at_gates=True).end
Marker(score=28, gate=None)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from games.castle.data import TrackDef
from games.records import fast_init

__all__ = ["Marker", "Step", "Wall"]


@fast_init
@dataclass(frozen=True, slots=True)
class Marker:
    """A scoring marker: total points and, in the gate variant, the gate it stands on.

    ``gate`` is the lower track number of that gate (27 for the gate between 27 and 28).
    """

    score: int = 0
    gate: int | None = None

    def space(self, length: int = 100) -> int:
        return self.score % length

    def lap(self, length: int = 100) -> int:
        return self.score // length


@dataclass(frozen=True, slots=True)
class Step:
    """One scoring move: where the marker started and ended, how many points counted."""

    start: Marker
    end: Marker
    points: int
    lost: int
    tower: int | None
    """Index of the corner tower the marker landed on (token or not); ``None`` when on none."""

    @property
    def gained(self) -> int:
        return self.end.score - self.start.score


@dataclass(frozen=True, slots=True)
class Wall:
    """The track's geometry: where towers and gates are."""

    length: int
    tower_at: Mapping[int, int]
    gates: tuple[int, ...]
    """Lower numbers of the gates in play (empty without the Falcon)."""

    @classmethod
    def build(
        cls, towers: tuple[tuple[int, int], ...], gates: tuple[tuple[int, int], ...] = (), length: int = 100
    ) -> Wall:
        tower_at = {space: i for i, pair in enumerate(towers) for space in pair}
        return cls(length, tower_at, tuple(sorted(g for g, _ in gates)))

    @classmethod
    def from_track(cls, track: TrackDef, *, with_gates: bool) -> Wall:
        return cls.build(tuple(t.spaces for t in track.towers), track.gates if with_gates else (), track.length)

    def advance(self, marker: Marker, points: int, *, halt_at_gates: bool = False) -> Step:
        """Move ``marker`` forward by ``points``; with ``halt_at_gates`` stop at the first gate."""
        target = marker.score + points
        if halt_at_gates and self.gates and points > 0:
            stop = self._first_gate(marker, target)
            if stop is not None:
                end = Marker(stop, stop % self.length)
                return Step(marker, end, points, target - stop, None)
        end = Marker(target)
        return Step(marker, end, points, 0, self.tower_at.get(end.space(self.length)) if points > 0 else None)

    def _first_gate(self, marker: Marker, target: int) -> int | None:
        """Score at which the marker reaches a gate while moving from ``marker`` to ``target``.

        Crossing gate ``g`` means stepping from ``lap*length + g`` to the space after it. A
        marker already standing on a gate leaves it freely.
        """
        best = None
        lap_start = marker.score - marker.score % self.length
        for g in self.gates:
            base = lap_start + g
            if base < marker.score or (base == marker.score and marker.gate == g):
                base += self.length
            if base < target and (best is None or base < best):
                best = base
        return best
