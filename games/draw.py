"""The specified random sources of every engine and bot: ``donjon-draw-2`` (:class:`Dealer`, new
games) and ``donjon-draw-1`` (:class:`Draw`, games recorded before it).

Both read :class:`Draw` streams, each a pure function of a key (the game's seed), a label and a
number. ``docs/fairness.md`` specifies them byte for byte, so that an auditor can re-run every
draw in any language; the test vectors there are checked by the tests.

``donjon-draw-1`` gives each decision the stream labelled with the game id (``<game id>:bot:<seat>``
for a bot) and numbered by the stream version the decision is taken on, so one more event before a
decision changes every draw after it. ``donjon-draw-2`` deals instead: each deck, pile or bag is
shuffled once, when it comes into play, on the stream ``<game id>:deal:<deck>`` numbered by the
deal (0 for the first, 1 for the first reshuffle, ...); randomness the rules make per event (a die
roll) comes from ``<game id>:<kind>`` numbered by the ordinal of that kind of event, and a bot's
from ``<game id>:bot:<seat>`` numbered by the engine events before its choice. Nothing a decision
draws depends on how many events (a clock running out, a seat leaving) the stream holds.

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
from collections import OrderedDict
from collections.abc import Callable, Iterable, MutableSequence, Sequence
from typing import Any, TypeVar

__all__ = [
    "DEAL_VERSION",
    "DRAW_VERSION",
    "DealMemo",
    "Dealer",
    "Draw",
    "DrawKey",
    "PerDecisionDraw",
    "canonical",
    "derive_draw",
]

DRAW_VERSION = "donjon-draw-1"
"""The per-decision scheme of games recorded before dealing, as ``draw`` in ``game.created``."""
DEAL_VERSION = "donjon-draw-2"
"""The scheme of new games (:class:`Dealer`), recorded as ``draw`` in ``game.created``."""

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

    __slots__ = ("_prepared", "raw")

    def __init__(self, key: bytes) -> None:
        self.raw = bytes(key)
        self._prepared = hmac.new(self.raw, digestmod=hashlib.sha256)

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

    def deal(self, deck: str, number: int, contents: Sequence[T]) -> None:
        """``None``: a stream of one decision deals nothing; the caller draws from it, item by
        item, as games of ``donjon-draw-1`` did."""
        return None

    def stream(self, kind: str, number: int) -> Draw:
        """This stream itself: under ``donjon-draw-1`` every draw of a decision comes from it."""
        return self


class PerDecisionDraw(RuntimeError):
    """An engine asked a :class:`Dealer` for a draw of the decision itself, which ``donjon-draw-2``
    never makes (a bug: a deck is dealt, an event's randomness has a stream of its own)."""


DealKey = tuple[bytes, str, int, tuple[Any, ...]]


class DealMemo:
    """The orders of the deals made lately, at most ``size`` (least recently used out), so that a
    decision reads a deck's order instead of shuffling it again. Owned by the caller (the
    service keeps one for every game it serves); what it holds is a pure function of its key."""

    __slots__ = ("_orders", "size")

    def __init__(self, size: int = 1024) -> None:
        if size < 1:
            raise ValueError(f"a deal memo holds at least one deal, not {size}")
        self.size = size
        self._orders: OrderedDict[DealKey, tuple[Any, ...]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._orders)

    def get(self, key: DealKey) -> tuple[Any, ...] | None:
        order = self._orders.get(key)
        if order is not None:
            self._orders.move_to_end(key)
        return order

    def put(self, key: DealKey, order: tuple[Any, ...]) -> None:
        self._orders[key] = order
        self._orders.move_to_end(key)
        while len(self._orders) > self.size:
            self._orders.popitem(last=False)


class Dealer:
    """``donjon-draw-2``: the random source of a whole game (see the module docstring).

    :meth:`deal` shuffles a deck once (Fisher-Yates on its own stream) and remembers the order
    in ``memo``; :meth:`stream` is the stream of one event's randomness or one bot's choice.
    The draws of a decision itself (``randrange``, ``choice`` ...) are refused with
    :class:`PerDecisionDraw`: no draw of a game depends on the stream version."""

    __slots__ = ("_game", "_key", "_memo", "_raw")

    def __init__(self, key: bytes | DrawKey, game_id: str, memo: DealMemo | None = None) -> None:
        self._key = key if isinstance(key, DrawKey) else DrawKey(key)
        self._raw = self._key.raw
        self._game = game_id
        self._memo = memo if memo is not None else DealMemo()

    def deal(self, deck: str, number: int, contents: Sequence[T]) -> tuple[T, ...]:
        """The order in which the ``number``-th deal of ``deck`` (0 the first, 1 its first
        reshuffle, ...) is drawn: ``contents``, the deck as it comes into play in its canonical
        order (:func:`canonical`), shuffled on the stream ``<game id>:deal:<deck>``, ``number``."""
        label = f"{self._game}:deal:{deck}"
        key = (self._raw, label, number, tuple(contents))
        order = self._memo.get(key)
        if order is None:
            items = list(contents)
            Draw(self._key, label, number).shuffle(items)
            order = tuple(items)
            self._memo.put(key, order)
        return order

    def stream(self, kind: str, number: int) -> Draw:
        """The stream of the ``number``-th random event of ``kind`` (``die``: a die roll), or of a
        bot's choice (``bot:<seat>``, numbered by the engine events before it): ``<game id>:<kind>``."""
        return Draw(self._key, f"{self._game}:{kind}", number)

    def secret_salt(self) -> str:
        """The salt of the secret options' commitments: ``secret_salt()`` of the stream
        ``<game id>``, 0 (it draws nothing)."""
        return Draw(self._key, self._game, 0).secret_salt()

    def _refuse(self, what: str) -> PerDecisionDraw:
        return PerDecisionDraw(f"{what}: {DEAL_VERSION} draws nothing per decision; deal the deck or use stream()")

    def randrange(self, start: int, stop: int | None = None) -> int:
        raise self._refuse("randrange")

    def randint(self, low: int, high: int) -> int:
        raise self._refuse("randint")

    def choice(self, items: Sequence[T]) -> T:
        raise self._refuse("choice")

    def shuffle(self, items: MutableSequence[T]) -> None:
        raise self._refuse("shuffle")

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        raise self._refuse("sample")


def canonical(pool: Iterable[tuple[str, int]]) -> tuple[str, ...]:
    """A deck's contents in the canonical order every deal starts from: each ``(id, count)`` pair
    as ``count`` copies of ``id``, ids sorted by their UTF-8 bytes.

    >>> canonical([("b", 1), ("a", 2)])
    ('a', 'a', 'b')
    """
    return tuple(item for name, count in sorted(pool) for item in (name,) * count)


def derive_draw(seed: bytes | DrawKey, label: str, version: int) -> Draw:
    """The stream for the decision taken on top of ``version`` (see the module docstring)."""
    return Draw(seed, label, version)


def seed_from_int(number: int) -> bytes:
    """A 32-byte key for harnesses that name games by a number (benches, property tests)."""
    return hashlib.sha256(b"donjon-draw-1 int seed " + str(number).encode()).digest()
