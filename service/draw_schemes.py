"""The random sources a recorded game may name, by the ``draw`` field of its ``game.created``.

``donjon-draw-1`` (:mod:`games.draw`) is the one new games use: specified in
``docs/fairness.md``, re-implementable in any language. Games recorded before it carry no
``draw`` field; they drew from CPython's ``random.Random`` seeded with
``sha256(seed || 0x00 || label || 0x00 || version)`` (:class:`LegacyRandom`), whose ``choice``,
``sample``, ``shuffle``, ``randint`` and ``randrange`` Python does not promise to keep. That
scheme stays here, behind its tag, so such games still replay; nothing new uses it. This module
is the only one of the engines' and the service's decisions to import ``random``.

>>> rng_for(DRAW_VERSION, b"k", "g", 3).randint(1, 6) == derive_draw(b"k", "g", 3).randint(1, 6)
True
>>> rng_for(LEGACY, b"k", "g", 3).randint(1, 6) == legacy_rng(b"k", "g", 3).randint(1, 6)
True
"""

from __future__ import annotations

import functools
import hashlib
import random
from typing import Any

from games.base import Rng
from games.draw import DRAW_VERSION, Draw, DrawKey, derive_draw

__all__ = [
    "DRAW_VERSION",
    "LEGACY",
    "SCHEMES",
    "LegacyRandom",
    "UnknownDrawScheme",
    "keyed_draw",
    "legacy_rng",
    "rng_for",
]

LEGACY = "python-random"
"""The scheme of games whose ``game.created`` names none (recorded before ``donjon-draw-1``)."""


class UnknownDrawScheme(ValueError):
    """A recorded game names a ``draw`` scheme this build does not have."""


class LegacyRandom(random.Random):
    """CPython's Mersenne Twister, as games before ``donjon-draw-1`` drew, with the salt they used
    for secret options (a hash of the generator's state, which draws nothing)."""

    def secret_salt(self) -> str:
        return hashlib.sha256(repr(self.getstate()).encode()).hexdigest()[:32]


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


SCHEMES: dict[str, Any] = {DRAW_VERSION: keyed_draw, LEGACY: legacy_rng}


def rng_for(scheme: str, seed: bytes, label: str, version: int) -> Rng:
    """The random source of ``scheme`` for ``label`` on top of ``version``."""
    derive = SCHEMES.get(scheme)
    if derive is None:
        raise UnknownDrawScheme(f"no draw scheme {scheme!r} (this build has {sorted(SCHEMES)})")
    rng: Rng = derive(seed, label, version)
    return rng
