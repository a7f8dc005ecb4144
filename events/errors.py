"""The event store's errors, named after PEP 249's split.

A :class:`ConflictError` is the store refusing a write because the stream moved (like
``IntegrityError``: the caller re-reads and decides again). A :class:`StoreUnavailable` is the
store not answering at all (like ``OperationalError``: connection refused or reset, timeouts,
a server still loading its data); the service turns it into a failing ``/readyz``. Every
:class:`~events.store.EventStore` method raises these instead of redis-py's exceptions.
"""

from __future__ import annotations

__all__ = [
    "StoreError",
    "ConflictError",
    "StoreUnavailable",
    "GameExists",
    "UnknownGame",
    "ChainBroken",
    "InvalidEvent",
    "DataDirInUse",
]


class StoreError(Exception):
    """Root of every error the event store raises."""


class ConflictError(StoreError):
    """The stream's version is not the one the append expected (another writer won)."""

    def __init__(self, game_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"game {game_id!r}: append expected version {expected}, the stream is at {actual}"
        )
        self.game_id = game_id
        self.expected = expected
        self.actual = actual


class StoreUnavailable(StoreError):
    """The Redis-protocol server cannot be reached or cannot answer now."""


class GameExists(StoreError):
    """``create_game`` for a game id that already has metadata or events."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} already exists")
        self.game_id = game_id


class UnknownGame(StoreError, KeyError):
    """An operation that needs an existing game got an id the store does not know."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"no game {game_id!r}")
        self.game_id = game_id

    def __str__(self) -> str:  # KeyError would quote the whole message again
        return str(self.args[0])


class ChainBroken(StoreError):
    """The hash chain of a game's events does not verify; ``version`` is the first bad event."""

    def __init__(self, game_id: str, version: int, reason: str) -> None:
        super().__init__(f"game {game_id!r}: hash chain broken at version {version}: {reason}")
        self.game_id = game_id
        self.version = version
        self.reason = reason


class InvalidEvent(StoreError, ValueError):
    """An event the store refuses to encode: bad type, or a payload that is not msgpack/JSON-safe."""


class DataDirInUse(StoreError):
    """An embedded server was asked to start on a data folder another live server owns."""
