"""Bots that fill seats: which bots each game offers, which bot seat owes a command, and the
random source of a bot's choice.

The bots of a game are those its ``games/<game>/bots.py`` names, by the one contract of
:mod:`games.base`: ``bots_for(engine)`` when the module has it (bots bound to the served engine,
such as The Castle served from an operator's dataset), else its ``BOTS`` mapping of name ->
:class:`~games.base.Bot`. An engine outside the registry of :mod:`games` (a test's engine handed
to the service) names its bots itself in ``engine.bots``: Bot objects by name, like ``BOTS``.

A bot's choice uses :func:`bot_rng` (:func:`service.fairness.draw_schemes.bot_rng_for`): under
``donjon-draw-2`` the stream ``<game id>:bot:<seat>`` numbered by the engine events folded before
the choice, so that a service event put before it (a clock running out, a seat leaving) changes
nothing the bot does; under the older schemes the game's stream of the version the choice is made
on, labelled with the game id suffixed ``:bot:<seat>`` (a suffix no game id can have, so it never
equals the rng of the engine's own decision on that version). It is therefore reproducible by
anyone holding the revealed seed, which is what ``donjon replay`` checks.

Which node makes a bot's move, and when, is :mod:`service.bots.scheduler`'s job.

>>> from games import find_engine
>>> sorted(bots_for(find_engine("castle")))
['greedy', 'random']
"""

from __future__ import annotations

import importlib
from typing import Any

from games import GAME_MODULES
from games.base import Bot, Engine, Rng
from projections.game import GameProjection, Status
from service.fairness.draw_schemes import bot_rng_for
from service.play.decisions import drawing_seed

__all__ = ["Bot", "bot_command_id", "bot_rng", "bots_for", "due_bot", "owes_bot"]


def bots_for(engine: Engine[Any]) -> dict[str, Bot]:
    """The bots ``engine``'s game offers, by name (empty when it offers none)."""
    package = GAME_MODULES.get(engine.name)
    if package is None:
        return dict(getattr(engine, "bots", {}))
    module = importlib.import_module(f"{package}.bots")
    bind = getattr(module, "bots_for", None)
    return dict(module.BOTS if bind is None else bind(engine))


def bot_rng(projection: GameProjection, server_seed: bytes, seat: int, *, version: int | None = None) -> Rng:
    """The random source of the bot in ``seat`` choosing on top of ``projection`` (or of
    ``version``, for a timeout's move decided after the ``clock.expired`` of the same append;
    under ``donjon-draw-2`` the version does not matter, the engine events before the choice do)."""
    return bot_rng_for(
        projection.draw,
        drawing_seed(projection, server_seed),
        projection.game_id,
        seat,
        version=projection.version if version is None else version,
        engine_events=projection.engine_events,
    )


def bot_command_id(seat: int, version: int) -> str:
    """The command id of the bot move of ``seat`` decided on top of ``version``: the same on every
    node, so the store applies a bot move at most once however many nodes race to make it."""
    return f"bot:{seat}:{version}"


def due_bot(engine: Engine[Any], state: Any, bots: tuple[str | None, ...]) -> tuple[int, str] | None:
    """The lowest bot seat that owes a command, with its bot's name; ``None`` when no bot does."""
    if not any(bots) or engine.is_terminal(state):
        return None
    owing = set(engine.waiting_for(state))
    candidates = [seat for seat, name in enumerate(bots) if name is not None and seat in owing]
    if not candidates:
        return None
    seat = candidates[0]
    return seat, bots[seat]  # type: ignore[return-value]


def owes_bot(projection: GameProjection) -> bool:
    """True when the game is under way and one of its bot seats owes the next command."""
    return (
        projection.has_bots
        and projection.status is Status.ACTIVE
        and due_bot(projection.engine, projection.state, projection.bots) is not None
    )
