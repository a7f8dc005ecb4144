"""The values engines and the service exchange: events, commands, viewers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from games.records import fast_init

__all__ = ["SPECTATOR", "Command", "Event", "Viewer"]

SPECTATOR = None
"""The viewer value for a spectator (anyone without a seat). Seats are ints from 0."""

Viewer = int | None
Command = dict[str, Any]


@fast_init  # one is made for every event folded
@dataclass(frozen=True, slots=True)
class Event:
    """One domain event as an engine produces it: a type tag and a msgpack-safe payload."""

    type: str
    payload: dict[str, Any] = field(default_factory=dict)
