"""The random source engines and bots draw from, and how the service derives it from a game's seed."""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import Any, Protocol, TypeVar

from games.draw import Dealer, DealMemo, Draw, DrawKey, derive_draw

__all__ = ["Rng", "dealt_rest", "derive_dealer", "derive_rng"]

T = TypeVar("T")


class Rng(Protocol):
    """The random source engines and bots draw from, one shape for every scheme of
    ``docs/fairness.md``: :class:`games.draw.Dealer` (``donjon-draw-2``, new games),
    :class:`games.draw.Draw` (``donjon-draw-1``) or the service's legacy ``random.Random``.

    An engine draws a deck, pile or bag through :meth:`deal` and randomness the rules make per
    event (a die roll) through :meth:`stream`; when :meth:`deal` answers ``None`` (a scheme that
    draws per decision) it draws from this object's own methods, as games of that scheme did.
    Under ``donjon-draw-2`` those per-decision methods refuse (``PerDecisionDraw``): nothing is
    keyed by the stream version. A bot is handed a :meth:`stream` and uses its methods."""

    def deal(self, deck: str, number: int, contents: Sequence[T]) -> Sequence[T] | None:
        """The order the ``number``-th deal of ``deck`` (0: as it comes into play; 1: its first
        reshuffle ...) is drawn in, ``contents`` being that deal in canonical order
        (:func:`games.draw.canonical`); ``None`` under a scheme that draws per decision."""
        ...

    def stream(self, kind: str, number: int) -> Rng:
        """The source of the ``number``-th random event of ``kind`` (``"die"``) or of a bot's
        choice (``"bot:<seat>"``): a stream of its own under ``donjon-draw-2``, this object under
        the schemes that draw per decision."""
        ...

    def randrange(self, start: int, stop: int | None = None) -> int: ...

    def randint(self, low: int, high: int) -> int: ...

    def choice(self, items: Sequence[T]) -> T: ...

    def shuffle(self, items: MutableSequence[Any]) -> None: ...

    def sample(self, items: Sequence[T], k: int) -> list[T]: ...

    def secret_salt(self) -> str:
        """A salt as secret as the stream, drawn without consuming any of it."""
        ...


def derive_dealer(seed: bytes | DrawKey, game_id: str, memo: DealMemo | None = None) -> Dealer:
    """The random source of every decision of the ``donjon-draw-2`` game ``game_id`` keyed by its
    game seed (:class:`games.draw.Dealer`; its deals remembered in ``memo``, or in its own)."""
    return Dealer(seed, game_id, memo)


def derive_rng(seed: bytes, game_id: str, version: int) -> Draw:
    """The random source of a ``donjon-draw-1`` game's command decided on top of stream
    ``version``: the stream of ``seed`` labelled ``game_id`` (:func:`games.draw.derive_draw`).

    Derived from the game's secret seed, so that anyone holding the revealed seed can re-run
    every decision and check that each random outcome in the log is the one the seed gives.
    """
    return derive_draw(seed, game_id, version)


def dealt_rest(rng: Rng, deck: str, number: int, contents: Sequence[T], left: int) -> Sequence[T] | None:
    """What is still to be drawn of the ``number``-th deal of ``deck`` when ``left`` of its
    ``contents`` are left (the deal's order from position ``len(contents) - left`` on), or ``None``
    when ``rng`` deals nothing (``donjon-draw-1``, the legacy scheme: draw item by item)."""
    order = rng.deal(deck, number, contents)
    if order is None:
        return None
    return order[len(contents) - left :]
