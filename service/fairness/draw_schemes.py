"""The random sources a recorded game may name, by the ``draw`` field of its ``game.created``.

``donjon-draw-2`` (:class:`games.draw.Dealer`) is the one new games use: every deck, pile and bag
dealt once from the game seed, per-event randomness and bots on streams numbered by what came
before of their kind, never by the stream version. ``donjon-draw-1`` (:class:`games.draw.Draw`)
gave each decision the stream of its stream version; games recorded with it keep replaying
under it. Both are specified in ``docs/fairness.md``, re-implementable in any language. Games
recorded before either carry no ``draw`` field; they drew from CPython's ``random.Random`` seeded
with ``sha256(seed || 0x00 || label || 0x00 || version)`` (:class:`LegacyRandom`), whose ``choice``,
``sample``, ``shuffle``, ``randint`` and ``randrange`` Python does not promise to keep. That
scheme stays here, behind its tag, so such games still replay; nothing new uses it. This module
is the only one of the engines' and the service's decisions to import ``random``.

The deals of ``donjon-draw-2`` are remembered here (:data:`DEALS_KEPT` of them, least recently
used out), so that a decision reads a deck's order instead of shuffling it again.

>>> rng_for(DRAW_VERSION, b"k", "g", 3).randint(1, 6) == derive_draw(b"k", "g", 3).randint(1, 6)
True
>>> rng_for(LEGACY, b"k", "g", 3).randint(1, 6) == legacy_rng(b"k", "g", 3).randint(1, 6)
True
>>> rng_for(DEAL_VERSION, b"k", "g", 3).deal("d", 0, "abc") == rng_for(DEAL_VERSION, b"k", "g", 9).deal("d", 0, "abc")
True
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Sequence
from typing import Any, TypeVar

from games.base import Rng
from games.draw import DEAL_VERSION, DRAW_VERSION, Dealer, DealMemo, Draw, DrawKey, derive_draw

__all__ = [
    "DEALS_KEPT",
    "DEAL_VERSION",
    "DRAW_VERSION",
    "LEGACY",
    "SCHEMES",
    "LegacyRandom",
    "UnknownDrawScheme",
    "bot_rng_for",
    "dealer",
    "keyed_draw",
    "legacy_rng",
    "rng_for",
]

T = TypeVar("T")

LEGACY = "python-random"
"""The scheme of games whose ``game.created`` names none (recorded before ``donjon-draw-1``)."""


class UnknownDrawScheme(ValueError):
    """A recorded game names a ``draw`` scheme this build does not have."""


class LegacyRandom(random.Random):
    """CPython's Mersenne Twister, as games before ``donjon-draw-1`` drew, with the salt they used
    for secret options (a hash of the generator's state, which draws nothing)."""

    def secret_salt(self) -> str:
        return hashlib.sha256(repr(self.getstate()).encode()).hexdigest()[:32]

    def deal(self, deck: str, number: int, contents: Sequence[T]) -> None:
        """``None``: the legacy scheme drew item by item from the decision's generator."""
        return None

    def stream(self, kind: str, number: int) -> LegacyRandom:
        """This generator: every draw of a legacy decision came from it."""
        return self


def legacy_rng(seed: bytes, label: str, version: int) -> LegacyRandom:
    """The pre-``donjon-draw-1`` rng of the decision on top of ``version``."""
    digest = hashlib.sha256(seed + b"\x00" + label.encode() + b"\x00" + str(version).encode()).digest()
    return LegacyRandom(int.from_bytes(digest, "big"))


DRAW_KEYS_KEPT = 4096
"""Prepared draw keys :func:`keyed_draw` keeps (least recently used out): one per game seed."""


@functools.lru_cache(maxsize=DRAW_KEYS_KEPT)
def _draw_key(seed: bytes) -> DrawKey:
    return DrawKey(seed)


def keyed_draw(seed: bytes, label: str, version: int) -> Draw:
    """:func:`games.draw.derive_draw` with the seed's HMAC set up once per seed, not per
    decision (the same draws: :class:`games.draw.DrawKey`)."""
    return derive_draw(_draw_key(seed), label, version)


DEALS_KEPT = 4096
"""Deals :func:`dealer` remembers: a few per game served (a pile, a deck and its reshuffles)."""
_DEALS = DealMemo(DEALS_KEPT)


def dealer(seed: bytes, game_id: str) -> Dealer:
    """The ``donjon-draw-2`` source of the game ``game_id`` keyed by ``seed``, its deals remembered."""
    return Dealer(_draw_key(seed), game_id, _DEALS)


PER_DECISION: dict[str, Any] = {DRAW_VERSION: keyed_draw, LEGACY: legacy_rng}
"""The schemes that gave each decision a stream of its own: name -> ``derive(seed, label, version)``."""
SCHEMES = (DEAL_VERSION, *PER_DECISION)
"""Every scheme this build draws with, the one of new games first."""


def _per_decision(scheme: str) -> Any:
    derive = PER_DECISION.get(scheme)
    if derive is None:
        raise UnknownDrawScheme(f"no draw scheme {scheme!r} (this build has {sorted(SCHEMES)})")
    return derive


def rng_for(scheme: str, seed: bytes, game_id: str, version: int) -> Rng:
    """The random source of the engine's decision taken on top of ``version``: under
    ``donjon-draw-2`` the game's :func:`dealer`, whatever the version; under the older schemes
    the stream labelled ``game_id`` of that version."""
    if scheme == DEAL_VERSION:
        return dealer(seed, game_id)
    rng: Rng = _per_decision(scheme)(seed, game_id, version)
    return rng


def bot_rng_for(scheme: str, seed: bytes, game_id: str, seat: int, *, version: int, engine_events: int) -> Rng:
    """The random source of the bot of ``seat`` choosing when ``engine_events`` engine events are
    folded, on top of stream ``version``: under ``donjon-draw-2`` the stream ``<game id>:bot:<seat>``
    numbered by ``engine_events`` (a clock running out or a seat leaving does not change it);
    under the older schemes the stream of that label on top of ``version``."""
    if scheme == DEAL_VERSION:
        return dealer(seed, game_id).stream(f"bot:{seat}", engine_events)
    rng: Rng = _per_decision(scheme)(seed, f"{game_id}:bot:{seat}", version)
    return rng
