"""The real types of the replies the store's client gives.

redis-py annotates each reply for every client set-up (``str`` with ``decode_responses``,
``None`` where RESP3 may say nothing); this store's client always answers bytes, so its replies
get their real types here, once. ``cast`` only: nothing is converted at run time.
"""

from __future__ import annotations

from typing import Any, cast

Entry = tuple[bytes, dict[bytes, bytes]]
"""One stream entry as the client returns it: its id and its fields."""


def as_bytes(reply: Any) -> bytes:
    return cast(bytes, reply)


def as_fields(reply: Any) -> dict[bytes, bytes]:
    return cast("dict[bytes, bytes]", reply)


def as_entries(reply: Any) -> list[Entry]:
    """An XRANGE or XREVRANGE reply."""
    return cast("list[Entry]", reply)


def as_streams(reply: Any) -> list[tuple[bytes, list[Entry]]]:
    """An XREAD reply: ``(stream key, entries)`` per stream with new entries (``None``: none had any)."""
    return cast("list[tuple[bytes, list[Entry]]]", reply or [])


def outcome(reply: Any) -> str:
    """The first element of a script's reply, the word saying how it went (``ok``, ``dup``...)."""
    first = reply[0]
    return first.decode() if isinstance(first, bytes) else str(first)
