"""A draining node takes no new work: games, seats, rematches and sockets are refused with 503
``draining`` (:mod:`service.run.drain`); reads and the commands of open sockets go on."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from service.edge.keys import LIFECYCLE
from service.errors import ErrorCode, ServiceError

__all__ = ["refuse_new_work_while_draining"]

_NEW_WORK = frozenset({"/games", "/games/{id}/seats", "/games/{id}/rematch"})


def _is_new_work(request: web.Request) -> bool:
    route = request.match_info.route.resource
    canonical = route.canonical if route is not None else ""
    if request.method == "POST":
        return canonical in _NEW_WORK
    return canonical == "/games/{id}/ws"


@web.middleware
async def refuse_new_work_while_draining(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.app[LIFECYCLE].draining and _is_new_work(request):
        raise ServiceError(ErrorCode.DRAINING, "this node is shutting down: retry, another node will take it")
    return await handler(request)
