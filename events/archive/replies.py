"""The live store's replies as the archiving pass reads them (:mod:`events.archive.archiver`):
a hash's fields, and a stream's entries taken apart column by column from the server's arrays."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Any

from events.archive.base import Entry

__all__ = ["entries_of_reply", "pairs"]


def pairs(reply: Any) -> dict[bytes, bytes]:
    """A hash as HGETALL's parsed reply (a dict) or as a flat list of names and values."""
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[::2], reply[1::2], strict=True))


_ENTRY_FIELDS = (b"b", b"p", b"h")
"""The fields of every stream entry, in the order the append script writes them."""


def entries_of_reply(reply: Any) -> list[Entry]:
    """Stream entries as XRANGE sends them (``[id, [b, body, p, prev, h, hash]]`` each) or as
    redis-py parses them (an id and a dict per entry, on a cluster). The plain arrays are taken
    apart column by column (C loops, no Python frame per entry): a stream whose entries do not
    all hold exactly ``b p h`` in that order goes the slow way."""
    if not reply:
        return []
    ids, fields = zip(*reply, strict=True)
    if isinstance(fields[0], dict):
        return [(_version_of(entry), f[b"b"], f[b"p"].decode(), f[b"h"].decode()) for entry, f in reply]
    if set(map(len, fields)) != {6} or set(map(itemgetter(0, 2, 4), fields)) != {_ENTRY_FIELDS}:
        return [(_version_of(entry), *_named(f)) for entry, f in reply]
    return list(zip(_versions(ids), map(itemgetter(1), fields),
                    map(bytes.decode, map(itemgetter(3), fields)), map(bytes.decode, map(itemgetter(5), fields)),
                    strict=True))


_IDS: list[bytes] = []
"""``b"1-0", b"2-0", ...``: the entry ids of a stream, as far as one has been read (up to
:data:`_IDS_KEPT`)."""
_IDS_KEPT = 4096


def _versions(ids: Sequence[bytes]) -> Iterable[int]:
    """The versions of a stream's entry ids: ``1, 2, ...`` when they are exactly those (one list
    comparison, in C), else each one read."""
    while len(_IDS) < min(len(ids), _IDS_KEPT):
        _IDS.append(b"%d-0" % (len(_IDS) + 1))
    if len(ids) <= _IDS_KEPT and list(ids) == _IDS[:len(ids)]:
        return range(1, len(ids) + 1)
    return map(_version_of, ids)


def _version_of(entry_id: bytes) -> int:
    return int(entry_id.partition(b"-")[0])


def _named(fields: Sequence[bytes]) -> tuple[bytes, str, str]:
    named = dict(zip(fields[::2], fields[1::2], strict=True))
    return named[b"b"], named[b"p"].decode(), named[b"h"].decode()
