"""The hash chain that makes a game's log tamper-evident, and how to verify it without the store.

Each event's hash is ``sha1(prev_hash + body)``: ``prev_hash`` is the previous event's hash as 40
ASCII hex digits (:data:`~events.envelope.GENESIS_HASH` for the first event) and ``body`` is the
event's msgpack body (:func:`events.codec.encode_body`). The append script computes it inside
Redis (``redis.sha1hex``; Lua in Redis has no SHA-256), so no writer can skip it. Changing,
dropping, reordering or inserting any event changes every later hash; an auditor holding the last
hash (taken from the store with ``EventStore.head``, or from an earlier export) can detect any
edit. ``game.finished`` does not carry a hash: it is in the chain like every other event.

>>> from events.envelope import GENESIS_HASH
>>> link_hash(GENESIS_HASH, b"\\x80")
'a97aa65130ba45cbfc81900127c97a921c8498ac'
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import msgpack

from events.codec import encode_body
from events.envelope import GENESIS_HASH, Envelope
from events.errors import ChainBroken

__all__ = ["link_hash", "verify_bodies", "verify_envelopes"]


def link_hash(prev_hash: str, body: bytes) -> str:
    """The hash of an event whose encoded body is ``body`` and whose predecessor hashed to ``prev_hash``."""
    return hashlib.sha1(prev_hash.encode("ascii") + body).hexdigest()


def verify_bodies(
    game_id: str,
    entries: Iterable[tuple[int, bytes, str, str]],
    *,
    first_version: int = 1,
    prev_hash: str = GENESIS_HASH,
) -> str:
    """Verify raw ``(version, body, prev_hash, hash)`` tuples in stream order; the last hash.

    Starts at ``first_version`` whose predecessor hashed to ``prev_hash`` (defaults: the whole log).
    Raises :class:`ChainBroken` naming the first event that does not verify.
    """
    expected_version = first_version
    for version, body, stored_prev, stored_hash in entries:
        if version != expected_version:
            raise ChainBroken(game_id, expected_version, f"found version {version} in its place")
        if stored_prev != prev_hash:
            raise ChainBroken(game_id, version, f"prev_hash {stored_prev} != hash of the event before, {prev_hash}")
        if link_hash(prev_hash, body) != stored_hash:
            raise ChainBroken(game_id, version, "hash does not match the event's bytes")
        try:
            fields = msgpack.unpackb(body, raw=False)
        except Exception as exc:  # corrupt bytes that still hash: an auditor wants the version, not a traceback
            raise ChainBroken(game_id, version, f"body is not msgpack ({exc})") from None
        if not isinstance(fields, dict) or fields.get("version") != version or fields.get("game_id") != game_id:
            raise ChainBroken(game_id, version, "body names another game or version")
        prev_hash = stored_hash
        expected_version += 1
    return prev_hash


def verify_envelopes(
    envelopes: Iterable[Envelope],
    *,
    game_id: str | None = None,
    first_version: int = 1,
    prev_hash: str = GENESIS_HASH,
) -> str:
    """Verify an exported log (envelopes read with ``upcast=False``); the last hash.

    ``game_id`` defaults to the first envelope's. Raises :class:`ChainBroken` at the first bad event.
    """
    items = list(envelopes)
    if game_id is None:
        game_id = items[0].game_id if items else ""
    return verify_bodies(
        game_id,
        ((e.version, encode_body(e), e.prev_hash, e.hash) for e in items),
        first_version=first_version,
        prev_hash=prev_hash,
    )
