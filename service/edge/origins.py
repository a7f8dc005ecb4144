"""Which browser pages may use the service: CORS for HTTP, the same check for the websocket.

``DONJON_CORS_ORIGINS`` lists the origins allowed besides the service's own (``*``: any, for
development; empty, the default: same-origin only). A request is judged by its ``Origin``
header alone:

* no ``Origin``: not a browser page (curl, a bot, a mobile app): served as before;
* the service's own origin (``Origin``'s host is the request's ``Host``) or a listed one: served,
  and the response says so (``Access-Control-Allow-Origin``), so the page may read it;
* any other: refused with ``403 origin_not_allowed``, before the route runs. A page on another
  origin therefore can neither call a route nor open a seat's websocket with a stolen token,
  and a browser's preflight (``OPTIONS`` with ``Access-Control-Request-Method``) is refused
  the same way.

An allowed preflight is answered ``204`` with the route's methods and the request headers the
API reads (``Authorization``, ``Content-Type``). Tokens travel in the ``Authorization`` header,
never in cookies, so no response allows credentials.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import hdrs, web

from service.edge.keys import SETTINGS
from service.errors import ErrorCode, ServiceError
from service.ops.settings import ANY_ORIGIN as ANY

__all__ = ["add_cors_headers", "origin_allowed", "origin_middleware"]

ALLOWED_HEADERS = "Authorization, Content-Type"
PREFLIGHT_MAX_AGE = "600"


def _same_origin(origin: str, request: web.Request) -> bool:
    """The page came from this service: the host it names is the one the request went to.
    (Ports included; the scheme is not compared, so TLS ended at a proxy still matches.)"""
    return urlsplit(origin).netloc.lower() == (request.host or "").lower()


def origin_allowed(origin: str | None, request: web.Request) -> bool:
    if origin is None:
        return True
    allowed = request.app[SETTINGS].cors_origins
    return ANY in allowed or origin.rstrip("/") in allowed or _same_origin(origin, request)


def _is_preflight(request: web.Request) -> bool:
    return request.method == hdrs.METH_OPTIONS and hdrs.ACCESS_CONTROL_REQUEST_METHOD in request.headers


def _route_methods(request: web.Request) -> list[str]:
    """The methods the requested path answers to (HEAD goes without saying); ``not_found`` for
    a path with no route."""
    exception = request.match_info.http_exception
    if isinstance(exception, web.HTTPMethodNotAllowed):
        methods = set(exception.allowed_methods)
    elif exception is not None:
        raise ServiceError(ErrorCode.NOT_FOUND, f"no route {request.path!r}")
    else:
        methods = {route.method for route in request.match_info.route.resource or ()}
    return sorted(methods - {hdrs.METH_HEAD})


@web.middleware
async def origin_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Refuse pages of origins not allowed; answer the preflights of allowed ones."""
    origin = request.headers.get(hdrs.ORIGIN)
    if not origin_allowed(origin, request):
        raise ServiceError(
            ErrorCode.ORIGIN_NOT_ALLOWED,
            f"origin {origin!r} may not use this service (DONJON_CORS_ORIGINS lists the origins allowed)",
        )
    if origin is not None and _is_preflight(request):
        return web.Response(
            status=204,
            headers={
                hdrs.ACCESS_CONTROL_ALLOW_METHODS: ", ".join(_route_methods(request)),
                hdrs.ACCESS_CONTROL_ALLOW_HEADERS: ALLOWED_HEADERS,
                hdrs.ACCESS_CONTROL_MAX_AGE: PREFLIGHT_MAX_AGE,
            },
        )
    return await handler(request)


async def add_cors_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: every answer to an allowed page (errors included) may be read by it."""
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is None or not origin_allowed(origin, request) or response.status == 101:
        return
    any_origin = ANY in request.app[SETTINGS].cors_origins
    response.headers[hdrs.ACCESS_CONTROL_ALLOW_ORIGIN] = ANY if any_origin else origin
    response.headers[hdrs.ACCESS_CONTROL_EXPOSE_HEADERS] = "Allow"
    if not any_origin:
        response.headers.add(hdrs.VARY, hdrs.ORIGIN)
