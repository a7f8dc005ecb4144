"""The undo checkpoints a run of engine events opens, carries on or drops, as
:meth:`projections.game.GameProjection.apply_all` folds it.

A human seat's command batch opens a checkpoint on top of those of the same seat; any other
seat's batch (or a bot's, or any in a game without undo) drops them all, and so does a reveal.
Most are dropped within the run they open in (the next draw reveals), so the batches a run opens
are noted as plain tuples and made :class:`Checkpoint` records only at the run's end.

>>> marks = RunCheckpoints(())
>>> marks.command(0, 5, "s5", 3)
>>> marks.continued(6)
>>> [(c.seat, c.first, c.last) for c in marks.result(6)]
[(0, 5, 6)]
>>> marks.command(1, 7, "s7", 5)
>>> [(c.seat, c.first, c.last) for c in marks.result(7)]
[(1, 7, 7)]
"""

from __future__ import annotations

from typing import Any

from projections.lifecycle import Checkpoint

__all__ = ["RunCheckpoints"]

_Opened = tuple[int, int, Any, int]
"""A command batch a run opened a checkpoint for: (seat, first version, state and engine events before it)."""


class RunCheckpoints:
    """The checkpoints standing while a run is folded: those from before the run still standing
    (``kept``, the newest one's batch possibly running on to ``kept_last``) and those the run
    opened (``opened``, all of one seat, on top of ``kept``)."""

    __slots__ = ("kept", "kept_last", "newest_seat", "opened")

    def __init__(self, kept: tuple[Checkpoint, ...]) -> None:
        self.kept = kept
        self.kept_last = 0
        self.opened: list[_Opened] = []
        self.newest_seat = kept[-1].seat if kept else None

    @property
    def standing(self) -> bool:
        return bool(self.opened or self.kept)

    def command(self, actor: int | None, version: int, state: Any, engine_events: int) -> None:
        """A command batch starts at ``version``: ``actor`` is the human seat that may undo it,
        ``None`` when nobody may (which drops every checkpoint)."""
        if actor is None or actor != self.newest_seat:
            self.drop()
        if actor is not None:
            self.opened.append((actor, version, state, engine_events))
            self.newest_seat = actor

    def continued(self, version: int) -> None:
        """An engine event of no command at ``version``: the batch before it goes on."""
        if self.kept and not self.opened:
            self.kept_last = version

    def drop(self) -> None:
        self.kept, self.kept_last, self.newest_seat = (), 0, None
        self.opened.clear()

    def result(self, last: int) -> tuple[Checkpoint, ...]:
        """Every checkpoint standing once the run ends at version ``last``."""
        return _with_opened(_extended(self.kept, self.kept_last), self.opened, last)


def _extended(checkpoints: tuple[Checkpoint, ...], last: int) -> tuple[Checkpoint, ...]:
    """``checkpoints`` with the newest one's batch running to version ``last`` (0: as they are)."""
    if not last:
        return checkpoints
    top = checkpoints[-1]
    return (*checkpoints[:-1], Checkpoint(top.seat, top.first, last, top.state, top.engine_events))


def _with_opened(kept: tuple[Checkpoint, ...], opened: list[_Opened], last: int) -> tuple[Checkpoint, ...]:
    """``kept`` and a checkpoint for each batch of ``opened``, each running to the version before
    the next one's first, the newest to ``last``."""
    if not opened:
        return kept
    ends = [first - 1 for _, first, _, _ in opened[1:]] + [last]
    made = (Checkpoint(seat, first, end, state, events) for (seat, first, state, events), end in zip(opened, ends))
    return (*kept, *made)
