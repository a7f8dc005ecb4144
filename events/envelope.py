"""The envelope every stored event travels in, and what callers hand the store to append.

An :class:`Envelope` is one event as the store keeps it: the domain event (``type``, ``schema``,
``payload``) plus where it sits (``game_id``, ``version``), who caused it (``command_id``,
``actor``, and on the first event of a batch the ``command`` itself), when (``ts``) and the hash
chain that makes an exported log tamper-evident (``prev_hash``, ``hash``). Callers never build
envelopes: they append :class:`NewEvent` values and the store fills in the rest.

>>> NewEvent("tile_placed", {"x": 0, "y": 1})
NewEvent(type='tile_placed', payload={'x': 0, 'y': 1}, schema=1, sealed=None)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["GENESIS_HASH", "AppendResult", "Envelope", "NewEvent"]

GENESIS_HASH = "0" * 40
"""The ``prev_hash`` of every game's first event (a SHA-1 hex digest's width of zeros)."""


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to append: its type, its msgpack/JSON-safe payload, its payload schema version."""

    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    schema: int = 1
    sealed: bytes | None = None
    """The event's sealed part (``docs/store.md``, "Sealed parts"), stored as it is; ``None``: none."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """One stored event.

    ``version`` is the event's 1-based position in its game's stream. ``actor`` is the seat whose
    command produced it, ``None`` for the service. ``ts`` is milliseconds since the epoch, set by
    the service. ``command`` is the command object that produced the batch, on the batch's first
    event only, so an auditor can re-run ``decide``. ``hash`` is ``H(prev_hash + encoded body)``
    (see :mod:`events.chain`).
    """

    game_id: str
    version: int
    type: str
    schema: int
    payload: dict[str, Any]
    command_id: str | None
    actor: int | None
    ts: int
    prev_hash: str
    hash: str
    command: dict[str, Any] | None = None
    sealed: bytes | None = None
    """The sealed part of the stored body (the ``sealed`` key), when it has one: what the stored
    ``payload`` and ``command`` leave out, sealed with the game's hiding key (``docs/store.md``).
    An envelope whose sealed part was opened has the whole payload and command and ``None`` here."""

    def as_dict(self) -> dict[str, Any]:
        """Every field as a plain dict (JSON-safe when the payload is), e.g. for an export."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Versions of the first and last event a command produced; ``duplicate`` when it was a replay."""

    first_version: int
    last_version: int
    duplicate: bool = False
    head: str = ""
    """The chain hash of the last event appended, when the store computed it (SHA-256 games)."""
