"""What the service needs of an event store, as typed protocols: the seam a new backend fills.

:class:`Store` names exactly the calls the service, the projections and the CLI make, with their
types; :class:`events.store.EventStore` (Redis streams) is the one implementation. Beside it
live three indexes the service uses through the store: :class:`DueBotsIndex` (games whose bot
owes a move), :class:`DeadlineIndex` (running turn clocks) and :class:`Feed` (append notices
of the games a node watches). A new backend implements these four and is checked as
``tests/events/test_protocol.py`` checks the Redis one; docs/store.md says what each call
guarantees (atomic appends with an expected version, command-id idempotency, the errors of
:mod:`events.errors`).

The protocols are ``runtime_checkable``, so ``isinstance(store, Store)`` says whether every
member is there (not their signatures: mypy checks those wherever a store is passed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from events.batcher import BatchStats
from events.envelope import AppendResult, Envelope, NewEvent
from events.ledger import Ledger

__all__ = ["DeadlineIndex", "DueBotsIndex", "Feed", "Hook", "Store"]

Hook = Callable[[], None]
"""A listener the feed calls (a metrics counter's ``inc``, say); given at construction."""


@runtime_checkable
class DueBotsIndex(Protocol):
    """The games whose bot seat owes a move, and since when (:mod:`events.due`)."""

    async def mark(self, game_id: str, since_ms: int) -> None: ...

    async def bump(self, game_id: str, since_ms: int) -> None: ...

    async def drop(self, game_id: str, since_ms: float) -> bool: ...

    async def due(self, before_ms: int, limit: int) -> list[tuple[str, float]]: ...


@runtime_checkable
class DeadlineIndex(Protocol):
    """The games with a running turn clock and their next deadline (:mod:`events.deadlines`)."""

    async def arm(self, game_id: str, deadline_ms: int) -> None: ...

    async def disarm(self, game_id: str) -> None: ...

    async def due(self, now_ms: int, limit: int = 100) -> list[str]: ...

    async def earliest(self) -> int | None: ...


@runtime_checkable
class Feed(Protocol):
    """Notices of appends to the games a node watches (:mod:`events.feed`)."""

    problem: str | None
    """The feed's current trouble, ``None`` when every watched game is subscribed."""
    notices: int
    moved: int

    @property
    def connections(self) -> int: ...

    def subscribed_on(self, game_id: str) -> str | None: ...

    def watch(self, game_ids: Iterable[str]) -> None: ...

    async def next(self, poll: float) -> dict[str, list[Envelope]] | None: ...

    async def close(self) -> None: ...


@runtime_checkable
class Store(Protocol):
    """An event store as the service uses it (docs/store.md is the contract of each call)."""

    @property
    def cluster(self) -> bool:
        """True when reads over many games go one game at a time (Redis Cluster)."""
        ...

    @property
    def append_batches(self) -> BatchStats | None: ...

    @property
    def due_bots(self) -> DueBotsIndex: ...

    @property
    def deadlines(self) -> DeadlineIndex: ...

    @property
    def ledger(self) -> Ledger: ...

    def feed(
        self,
        *,
        on_notice: Hook | None = None,
        on_reconnect: Hook | None = None,
        shown: Callable[[str], str | None] | None = None,
    ) -> Feed: ...

    async def ping(self, budget: float | None = None) -> None: ...

    async def close(self) -> None: ...

    async def create_game(self, game_id: str, meta: Mapping[str, Any]) -> None: ...

    async def get_meta(self, game_id: str) -> dict[str, Any] | None: ...

    async def update_meta(self, game_id: str, fields: Mapping[str, Any]) -> None: ...

    async def append(
        self,
        game_id: str,
        events: Sequence[NewEvent],
        *,
        expected_version: int,
        command_id: str | None,
        actor: int | None,
        command: dict[str, Any] | None = None,
        ts: int,
        link: str | None = None,
    ) -> AppendResult: ...

    async def command_result(self, game_id: str, command_id: str) -> AppendResult | None: ...

    async def head(self, game_id: str) -> tuple[int, str]: ...

    async def read(
        self, game_id: str, from_version: int = 1, to_version: int | None = None, *, upcast: bool = True
    ) -> list[Envelope]: ...

    async def read_many(
        self, positions: Mapping[str, int], block_ms: int | None = None, *, count: int | None = None
    ) -> dict[str, list[Envelope]]: ...

    async def raw_entries(self, game_id: str) -> list[tuple[int, bytes, str, str]]: ...

    async def verify_chain(self, game_id: str) -> str: ...

    async def set_status(
        self, game_id: str, status: str, score: float, *, version: int = 0, fields: Mapping[str, Any] | None = None,
        only_live: bool = False,
    ) -> bool: ...

    async def is_filed(self, game_id: str, status: str) -> bool: ...

    async def list_games(
        self, status: str, limit: int = 50, offset: int = 0, *, newest_first: bool = True
    ) -> list[str]: ...
