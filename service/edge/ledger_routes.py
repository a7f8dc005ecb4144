"""``GET /ledger``: the public ledger of every game created (:mod:`service.fairness.ledger`).

``?from=N&limit=M`` pages through it (positions from 1; ``limit`` 1-1000, 100 by default);
``?game=ID`` answers that game's entry with the entries that link it to the signed head. A
value that is not a number in range, or ``game`` together with ``from``, is ``bad_request``.
"""

from __future__ import annotations

import re

from aiohttp import web

from service.edge.keys import CLOCK, SIGNING_KEY, STORE
from service.errors import ErrorCode, ServiceError
from service.fairness.ledger import DEFAULT_LIMIT, MAX_LIMIT, Signer, game_answer, page_answer
from service.play.cache import GAME_ID

__all__ = ["add_ledger_routes", "ledger_signer"]

_NUMBER = re.compile(r"[0-9]{1,16}")
_MAX_POSITION = 2**53 - 1


async def ledger_signer(app: web.Application) -> Signer:
    """The key that signs the ledger's head: the one that signs exports. The one place to switch
    when the deployment's key replaces the node's."""
    return app[SIGNING_KEY]


def _number(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    """The query parameter ``name``: an integer ``low``-``high``, ``default`` when absent."""
    raw = request.query.get(name)
    if raw is None:
        return default
    if not _NUMBER.fullmatch(raw) or not low <= int(raw) <= high:
        raise ServiceError(
            ErrorCode.BAD_REQUEST, f"query parameter {name!r} must be an integer {low}-{high}, got {raw!r}"
        )
    return int(raw)


async def get_ledger(request: web.Request) -> web.Response:
    """A page of the ledger, or one game's entry (``?game=ID``), with the signed head."""
    limit = _number(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    start = _number(request, "from", 1, 1, _MAX_POSITION)
    key, store, now = await ledger_signer(request.app), request.app[STORE], request.app[CLOCK]()
    game_id = request.query.get("game")
    if game_id is None:
        return web.json_response(await page_answer(store, key, now, start, limit))
    if "from" in request.query:
        raise ServiceError(ErrorCode.BAD_REQUEST, "give either 'game' or 'from', not both")
    if not GAME_ID.fullmatch(game_id):
        raise ServiceError(ErrorCode.NOT_FOUND, f"the ledger has no game {game_id!r}")
    return web.json_response(await game_answer(store, key, now, game_id, limit))


def add_ledger_routes(app: web.Application) -> None:
    app.router.add_get("/ledger", get_ledger)
