"""donjon-draw-1: the specified random source of every engine and bot.

Every random outcome of a game comes from one :class:`Draw` stream, a pure function of a key (the
game's seed), a label (the game id, or ``<game id>:bot:<seat>`` for a bot) and the stream version
the decision is taken on. ``docs/fairness.md`` specifies it byte for byte, so that an auditor can
re-run every draw in any language; the test vectors there are checked by the tests.

The bit stream is HMAC-SHA256 blocks::

    block(i) = HMAC-SHA256(key, utf8(label) || 0x00 || ascii(version) || 0x00 || uint64_be(i))

for ``i = 0, 1, 2, ...``, read as one byte string. Integers below ``n`` take the next 8 bytes as a
big-endian ``x`` and reject it while ``x >= 2**64 - 2**64 % n`` (no modulo bias), then ``x % n``.
On top: ``randrange``, ``randint``, ``choice``, Fisher-Yates ``shuffle`` (from the last index
down) and ``sample`` (the first ``k`` steps of a Fisher-Yates from the front).

>>> Draw(bytes(32), "g", 0).sample("abcde", 2) == Draw(bytes(32), "g", 0).sample("abcde", 2)
True
>>> Draw(bytes(32), "g", 0).below(6) in range(6)
True
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable, MutableSequence, Sequence
from typing import TypeVar

__all__ = ["DRAW_VERSION", "Draw", "DrawKey", "derive_draw"]

DRAW_VERSION = "donjon-draw-1"
"""The name of this algorithm, recorded as ``draw`` in ``game.created``."""

T = TypeVar("T")

_WORD = 8
_SPAN = 1 << 64
_SALT_SUFFIX = b"\x00salt"
"""A message no block has (a block message ends in 8 counter bytes after a NUL, this in 4 letters
after one), so the salt of :meth:`Draw.secret_salt` is independent of every draw."""


class DrawKey:
    """A key whose HMAC-SHA256 set-up (the hashed inner and outer pads) is done once, for a
    caller that draws many streams from the same key (the service, a game's seed): each block
    then costs a copy of that state and the message's hashing. The blocks are the same as
    from the plain key; the prepared state is never updated, only copied."""

    __slots__ = ("_prepared",)

    def __init__(self, key: bytes) -> None:
        self._prepared = hmac.new(bytes(key), digestmod=hashlib.sha256)

    def digest(self, message: bytes) -> bytes:
        """``HMAC-SHA256(key, message)``."""
        mac = self._prepared.copy()
        mac.update(message)
        return mac.digest()


class Draw:
    """One stream of draws; see the module docstring. Not thread-safe; cheap to make. ``key``
    is the key's bytes, or a :class:`DrawKey` prepared from them (the same draws)."""

    __slots__ = ("_buffer", "_counter", "_mac", "_position", "_prefix")

    def __init__(self, key: bytes | DrawKey, label: str, version: int) -> None:
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise ValueError(f"a draw stream's version is an int >= 0, got {version!r}")
        self._mac: Callable[[bytes], bytes] = (
            key.digest if isinstance(key, DrawKey) else functools.partial(hmac.digest, bytes(key), digest="sha256")
        )
        self._prefix = label.encode() + b"\x00" + str(version).encode() + b"\x00"
        self._counter = 0
        self._buffer = b""
        self._position = 0

    def _block(self) -> bytes:
        message = self._prefix + self._counter.to_bytes(8, "big")
        self._counter += 1
        return self._mac(message)

    def _word(self) -> int:
        """The next 8 bytes of the stream as a big-endian unsigned integer."""
        if self._position + _WORD > len(self._buffer):
            # A block holds exactly four words, so a word never straddles two blocks.
            self._buffer, self._position = self._block(), 0
        start = self._position
        self._position += _WORD
        return int.from_bytes(self._buffer[start : start + _WORD], "big")

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``, ``1 <= n <= 2**64``, by rejection sampling."""
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= _SPAN:
            raise ValueError(f"below(n) needs 1 <= n <= 2**64, got {n!r}")
        limit = _SPAN - _SPAN % n
        while True:
            x = self._word()
            if x < limit:
                return x % n

    def randrange(self, start: int, stop: int | None = None) -> int:
        """``below(start)`` with one argument; ``start + below(stop - start)`` with two."""
        if stop is None:
            return self.below(start)
        return start + self.below(stop - start)

    def randint(self, low: int, high: int) -> int:
        """A uniform integer in ``[low, high]``: ``low + below(high - low + 1)``."""
        return low + self.below(high - low + 1)

    def choice(self, items: Sequence[T]) -> T:
        """``items[below(len(items))]``; :class:`IndexError` for an empty sequence."""
        if not items:
            raise IndexError("cannot choose from an empty sequence")
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place: for ``i`` from ``len - 1`` down to 1, swap ``i`` with ``below(i + 1)``."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """``k`` distinct positions of ``items``, in draw order: for ``i`` from 0 to ``k - 1`` swap
        ``i`` with ``i + below(len - i)`` in a copy; the copy's first ``k``."""
        pool = list(items)
        if not 0 <= k <= len(pool):
            raise ValueError(f"sample of {k} from {len(pool)} items")
        for i in range(k):
            j = i + self.below(len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]

    def secret_salt(self) -> str:
        """A salt for the commitments to secret options that draws nothing from the stream:
        the first 32 hex digits of ``HMAC-SHA256(key, utf8(label) || 0x00 || ascii(version) || 0x00 salt)``."""
        return self._mac(self._prefix[:-1] + _SALT_SUFFIX).hex()[:32]


def derive_draw(seed: bytes | DrawKey, label: str, version: int) -> Draw:
    """The stream for the decision taken on top of ``version`` (see the module docstring)."""
    return Draw(seed, label, version)


def seed_from_int(number: int) -> bytes:
    """A 32-byte key for harnesses that name games by a number (benches, property tests)."""
    return hashlib.sha256(b"donjon-draw-1 int seed " + str(number).encode()).digest()
