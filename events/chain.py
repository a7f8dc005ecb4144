"""The hash chain that makes a game's log tamper-evident, and how to verify it without the store.

Each event's hash is ``H(prev_hash + body)``: ``prev_hash`` is the previous event's hash as ASCII
hex digits (all zeros for the first event: :func:`genesis`) and ``body`` is the event's msgpack
body (:func:`events.codec.encode_body`). ``H`` is the game's chain algorithm, named by
``chain`` in its ``game.created``: ``"sha256"`` (:data:`CHAIN`) for new games, computed by the
service and checked by the append script to link to the stored head (Lua in Redis has no
SHA-256); ``"sha1"`` for games recorded before it (no ``chain`` field), computed inside Redis
(``redis.sha1hex``). Changing, dropping, reordering or inserting any event changes every later
hash; an auditor holding the last hash (``EventStore.head``, or a signed export) can detect any
edit. ``game.finished`` does not carry a hash: it is in the chain like every other event.

>>> link_hash(genesis("sha1"), b"\\x80")
'a97aa65130ba45cbfc81900127c97a921c8498ac'
>>> link_hash(genesis("sha256"), b"\\x80", "sha256")[:16]
'c67e3c71b9b198b9'
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import msgpack

from events.codec import encode_body
from events.envelope import Envelope
from events.errors import ChainBroken

__all__ = ["ALGORITHMS", "CHAIN", "chain_of_body", "genesis", "link_hash", "verify_bodies", "verify_envelopes"]

CHAIN = "sha256"
"""The chain algorithm of new games (``chain`` in ``game.created``)."""
LEGACY_CHAIN = "sha1"
"""The chain of games whose ``game.created`` names none."""
ALGORITHMS = {"sha1": hashlib.sha1, "sha256": hashlib.sha256}


def genesis(algorithm: str = LEGACY_CHAIN) -> str:
    """The ``prev_hash`` of a game's first event: as many zeros as the algorithm has hex digits."""
    return "0" * (2 * ALGORITHMS[algorithm]().digest_size)


def link_hash(prev_hash: str, body: bytes, algorithm: str = LEGACY_CHAIN) -> str:
    """The hash of an event whose encoded body is ``body`` and whose predecessor hashed to ``prev_hash``."""
    return ALGORITHMS[algorithm](prev_hash.encode("ascii") + body).hexdigest()


def chain_of_body(body: bytes) -> str:
    """The chain algorithm a game's first body (its ``game.created``) names; SHA-1 when it names
    none or cannot be read (the check of that first link then reports the damage)."""
    try:
        fields = msgpack.unpackb(body, raw=False)
        chain = fields["payload"].get("chain", LEGACY_CHAIN)
    except Exception:
        return LEGACY_CHAIN
    return chain if chain in ALGORITHMS else LEGACY_CHAIN


def verify_bodies(
    game_id: str,
    entries: Iterable[tuple[int, bytes, str, str]],
    *,
    first_version: int = 1,
    prev_hash: str | None = None,
    algorithm: str | None = None,
) -> str:
    """Verify raw ``(version, body, prev_hash, hash)`` tuples in stream order; the last hash.

    Starts at ``first_version`` whose predecessor hashed to ``prev_hash`` (defaults: the whole
    log, from :func:`genesis`). ``algorithm`` defaults to the one the first body names
    (:func:`chain_of_body`) when the log starts at version 1, else SHA-1.
    Raises :class:`ChainBroken` naming the first event that does not verify.
    """
    expected_version = first_version
    for version, body, stored_prev, stored_hash in entries:
        if algorithm is None:
            algorithm = chain_of_body(body) if version == 1 else LEGACY_CHAIN
        if prev_hash is None:
            prev_hash = genesis(algorithm)
        if version != expected_version:
            raise ChainBroken(game_id, expected_version, f"found version {version} in its place")
        if stored_prev != prev_hash:
            raise ChainBroken(game_id, version, f"prev_hash {stored_prev} != hash of the event before, {prev_hash}")
        if link_hash(prev_hash, body, algorithm) != stored_hash:
            raise ChainBroken(game_id, version, "hash does not match the event's bytes")
        try:
            fields = msgpack.unpackb(body, raw=False)
        except Exception as exc:  # corrupt bytes that still hash: an auditor wants the version, not a traceback
            raise ChainBroken(game_id, version, f"body is not msgpack ({exc})") from None
        if not isinstance(fields, dict) or fields.get("version") != version or fields.get("game_id") != game_id:
            raise ChainBroken(game_id, version, "body names another game or version")
        prev_hash = stored_hash
        expected_version += 1
    return prev_hash if prev_hash is not None else genesis(algorithm or LEGACY_CHAIN)


def verify_envelopes(
    envelopes: Iterable[Envelope],
    *,
    game_id: str | None = None,
    first_version: int = 1,
    prev_hash: str | None = None,
    algorithm: str | None = None,
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
        algorithm=algorithm,
    )
